/* Bulwark page-view counter for sites Bulwark does not serve. Embed with
 *   <script async src="https://YOUR-BULWARK/collect.js"></script>
 * It reports each page view (and each in-page navigation of a single-page app) to the Bulwark
 * that served it: the page's address (without query; a landing page keeps its campaign tags,
 * utm_source, utm_medium, utm_campaign and ref, and nothing else of it), the referrer and the
 * browser's language.
 * Once sites are registered there, only theirs are counted. No cookies, no storage,
 * no identifiers. Pages without JavaScript can use
 *   <img src="https://YOUR-BULWARK/api/collect.gif" alt="" width="1" height="1">
 */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.src) return;
  var endpoint = new URL("/api/collect", script.src).href;
  var last = null;

  // The landing address's campaign tags alone: the rest of a query may hold tokens.
  function tags() {
    var all = new URLSearchParams(location.search);
    var kept = new URLSearchParams();
    ["utm_source", "utm_medium", "utm_campaign", "ref"].forEach(function (key) {
      var value = all.get(key);
      if (value) kept.set(key, value);
    });
    var query = kept.toString();
    return query ? "?" + query : "";
  }

  function send() {
    var path = location.pathname;
    if (path === last) return;
    var landing = last === null;
    var referrer = landing ? document.referrer : location.origin + last;
    last = path;
    // The page's origin tells Bulwark which site this is; the query string stays here.
    var url = location.origin + path + (landing ? tags() : "");
    var body = JSON.stringify({ url: url, referrer: referrer, lang: navigator.language });
    // sendBeacon posts text/plain, which needs no CORS preflight, and survives page unload.
    if (navigator.sendBeacon && navigator.sendBeacon(endpoint, body)) return;
    fetch(endpoint, { method: "POST", body: body, keepalive: true, mode: "no-cors", credentials: "omit" });
  }

  send();
  var pushState = history.pushState;
  history.pushState = function () {
    var result = pushState.apply(this, arguments);
    send();
    return result;
  };
  window.addEventListener("popstate", send);
})();
