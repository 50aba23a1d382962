/* Bulwark page-view counter for sites Bulwark does not serve. Embed with
 *   <script async src="https://YOUR-BULWARK/collect.js"></script>
 * It reports each page view (and each in-page navigation of a single-page app) to the Bulwark
 * that served it: the page's address (without query; a landing page keeps its campaign tags,
 * utm_source, utm_medium, utm_campaign and ref, and nothing else of it), the referrer and the
 * browser's language.
 * Once sites are registered there, only theirs are counted. No cookies, no storage,
 * no identifiers.
 *
 * Custom events (a sign-up, a download) are counted apart from page views:
 *   bulwark.event("Signup", { plan: "pro" })
 * with a name and, optionally, properties whose values are strings, numbers or booleans.
 * Calls made before this script has loaded are kept when the page defines the queue first:
 *   <script>window.bulwark = window.bulwark || { q: [], event: function () { this.q.push(arguments); } };</script>
 * Pages without JavaScript can use
 *   <img src="https://YOUR-BULWARK/api/collect.gif" alt="" width="1" height="1">
 */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.src) return;
  var endpoint = new URL("/api/collect", script.src).href;
  var eventEndpoint = new URL("/api/collect/event", script.src).href;
  var last = null;

  // sendBeacon posts text/plain, which needs no CORS preflight, and survives page unload.
  function post(url, body) {
    if (navigator.sendBeacon && navigator.sendBeacon(url, body)) return;
    fetch(url, { method: "POST", body: body, keepalive: true, mode: "no-cors", credentials: "omit" });
  }

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
    post(endpoint, JSON.stringify({ url: url, referrer: referrer, lang: navigator.language }));
  }

  // An event is sent from the page it happened on, without query string.
  function event(name, props) {
    if (typeof name !== "string" || !name) return;
    var body = { name: name, url: location.origin + location.pathname, lang: navigator.language };
    if (props && typeof props === "object") body.props = props;
    post(eventEndpoint, JSON.stringify(body));
  }

  var queued = window.bulwark && window.bulwark.q;
  window.bulwark = { event: event };
  if (queued) {
    for (var i = 0; i < queued.length; i++) event.apply(null, queued[i]);
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
