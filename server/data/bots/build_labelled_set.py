#!/usr/bin/env python3
"""Builds server/tests/data/user_agents.tsv, the labelled set the bot recogniser is measured
against (`bulwark bench bots`, and the accuracy test in server/tests/api/bots.rs).

    python3 build_labelled_set.py CRAWLER_USER_AGENTS_JSON BROWSERS_TXT > user_agents.tsv

- Bots: every instance in crawler-user-agents.json (npm `crawler-user-agents`, MIT). Its source
  label comes from the entry's documentation URL, through DOMAINS below: the operator who
  publishes the crawler, found independently of the recogniser's own tokens.
- People: a fixed sample of the browser fixtures of the `isbot` project (its
  fixtures/browsers list, Unlicense), every line a real browser's User-Agent.

Lines: `bot` or `person`, a tab, the expected source (empty when the operator is not one of
Bulwark's named sources), a tab, the User-Agent.
"""
import json
import random
import sys
from urllib.parse import urlparse

# Documentation host (its last two or three labels) -> the operator's source name.
DOMAINS = {
    "google.com": "google", "googleapis.com": "google", "bing.com": "bing",
    "baidu.com": "baidu", "yandex.com": "yandex", "yandex.ru": "yandex",
    "yahoo.com": "yahoo", "yahoo-help.jp": "yahoo", "duckduckgo.com": "duckduckgo",
    "sogou.com": "sogou", "facebook.com": "facebook", "twitter.com": "twitter",
    "linkedin.com": "linkedin", "pinterest.com": "pinterest", "semrush.com": "semrush",
    "ahrefs.com": "ahrefs", "majestic12.co.uk": "majestic", "mj12bot.com": "majestic",
    "moz.com": "dotbot", "opensiteexplorer.org": "dotbot",
    "openai.com": "openai", "anthropic.com": "anthropic", "perplexity.ai": "perplexity",
    "bytedance.com": "bytedance", "commoncrawl.org": "commoncrawl",
    "amazon.com": "amazon", "apple.com": "apple", "so.com": "qihoo360",
    "sm.cn": "shenma", "petalsearch.com": "huawei", "aspiegel.com": "huawei",
    "naver.com": "naver", "naver.me": "naver", "seznam.cz": "seznam", "qwant.com": "qwant",
    "daum.net": "daum", "coccoc.com": "coccoc", "mojeek.com": "mojeek", "ask.com": "ask",
    "kagi.com": "kagi", "cohere.com": "cohere", "mistral.ai": "mistral",
    "diffbot.com": "diffbot", "you.com": "you", "allenai.org": "ai2", "webz.io": "webz",
    "slack.com": "slack", "discord.com": "discord", "discordapp.com": "discord",
    "telegram.org": "telegram", "reddit.com": "reddit", "snapchat.com": "snapchat",
    "flipboard.com": "flipboard", "embed.ly": "embedly", "iframely.com": "iframely",
    "screamingfrog.co.uk": "screamingfrog", "serpstatbot.com": "serpstat",
    "sistrix.com": "sistrix", "dataforseo.com": "dataforseo", "seranking.com": "seranking",
    "babbar.tech": "babbar", "webmeup-crawler.com": "webmeup", "megaindex.com": "megaindex",
    "seokicks.de": "seokicks", "awario.com": "awario", "builtwith.com": "builtwith",
    "similarweb.com": "similarweb", "seobility.net": "seobility",
    "archive.org": "internetarchive", "bnf.fr": "bnf", "arquivo.pt": "arquivo",
    "bl.uk": "britishlibrary", "uptimerobot.com": "uptimerobot", "pingdom.com": "pingdom",
    "statuscake.com": "statuscake", "betteruptime.com": "betterstack",
    "betterstack.com": "betterstack", "datadoghq.com": "datadog", "newrelic.com": "newrelic",
    "site24x7.com": "site24x7", "gtmetrix.com": "gtmetrix", "checklyhq.com": "checkly",
    "hetrixtools.com": "hetrixtools", "freshping.io": "freshping", "updown.io": "updown",
    "cloudflare.com": "cloudflare", "sentry.io": "sentry", "paessler.com": "prtg",
    "w3.org": "w3c", "httrack.com": "httrack", "scrapy.org": "scrapy",
}


def source_of(url):
    host = (urlparse(url).hostname or "").lower()
    labels = host.split(".")
    for n in (3, 2):
        if ".".join(labels[-n:]) in DOMAINS:
            return DOMAINS[".".join(labels[-n:])]
    return ""


def clean(ua):
    return ua.replace("\t", " ").replace("\n", " ").replace("\r", " ").strip()


def main(crawlers_path, browsers_path):
    rows = []
    for entry in json.load(open(crawlers_path)):
        for ua in entry.get("instances", []):
            rows.append(("bot", source_of(entry.get("url", "")), clean(ua)))
    browsers = []
    for line in open(browsers_path, encoding="utf-8", errors="replace"):
        ua = clean(line).strip('"')
        if ua:
            browsers.append(ua)
    browsers = sorted(set(browsers))
    random.Random(20261201).shuffle(browsers)
    rows += [("person", "", ua) for ua in browsers[:12000]]
    seen = set()
    for label, source, ua in rows:
        if ua and ua not in seen:
            seen.add(ua)
            print(f"{label}\t{source}\t{ua}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
