#!/usr/bin/env python3
"""Builds the people's side of the labelled sets by device type: server/tests/data/people.tsv
(the part the rules may be tuned on) and server/tests/data/people_held_out.tsv (the part they
never are: a rule changed to pass a line of it is a rule fitted to the test).

    python3 build_people_set.py MATOMO_FIXTURES_DIR USER_AGENTS_JSON FAKE_USERAGENT_JSONL OUT_DIR

Sources, each a set of real browsers' User-Agents labelled by somebody else:
- Matomo Device Detector's test fixtures (LGPL-3.0-or-later), as shipped in the PyPI package
  `device_detector` 6.5.1 (`device_detector/tests/fixtures/upstream/*.yml`): every fixture whose
  client is a browser, a mobile app or a messenger, with the fixture's device type. An app's
  fixture is labelled by its shape whatever its device: `in-app` where it is a web view or an
  in-app browser (a browser's `Mozilla/…` text, Android's `Dalvik/…`, Facebook's `[FBAN/…]`),
  `app` where the app names only itself (podcast players, updaters: `Player FM`,
  `AntennaPod/2.4.0`), the shape scripts send too. Libraries, feed readers, media players and
  mail clients are left out: they are not a person looking at a page.
- The npm package `user-agents` 2.1.198 (BSD-2-Clause): `dist/user-agents.json`, sampled from
  real traffic, with its `deviceCategory`.
- The PyPI package `fake-useragent` 2.2.0 (Apache-2.0): `data/browsers.jsonl`, with its `type`.

Lines are those of build_labelled_set.py with the device type in the source column:
`person`, a tab, the device type, a tab, the User-Agent. Large device types are sampled (a fixed
seed) so that no single one outweighs the rest; a User-Agent is kept once, under its first
source. A quarter of the lines, chosen by a hash of the User-Agent, are held out.
"""
import glob
import hashlib
import json
import os
import random
import sys

import yaml

# Matomo's device types, as the report names them.
DEVICES = {
    "smartphone": "smartphone", "phablet": "smartphone", "feature phone": "feature-phone",
    "tablet": "tablet", "desktop": "desktop", "tv": "tv", "console": "console",
    "car browser": "car", "wearable": "wearable", "peripheral": "peripheral",
    "portable media player": "media-player", "smart display": "smart-display",
    "smart speaker": "smart-speaker", "camera": "camera", "": "unknown",
}
PEOPLE_CLIENTS = {"browser", "mobile app", "messaging"}
# At most this many lines of one device type from one source.
CAP = 2500


def clean(ua):
    return ua.replace("\t", " ").replace("\n", " ").replace("\r", " ").strip()


def matomo(fixtures):
    for path in sorted(glob.glob(os.path.join(fixtures, "*.yml"))):
        if os.path.basename(path).startswith("bots"):
            continue
        for entry in yaml.load(open(path, encoding="utf-8"), Loader=yaml.CSafeLoader) or []:
            client = entry.get("client") or {}
            if client.get("type") not in PEOPLE_CLIENTS:
                continue
            device = (entry.get("device") or {}).get("type") or ""
            ua = str(entry.get("user_agent") or "")
            if client["type"] == "browser":
                kind = DEVICES.get(device, "unknown")
            elif ua.startswith(("Mozilla/", "Dalvik/")) or "FBAN/" in ua:
                kind = "in-app"
            else:
                kind = "app"
            yield kind, ua


def user_agents(path):
    names = {"mobile": "smartphone", "tablet": "tablet", "desktop": "desktop"}
    for entry in json.load(open(path, encoding="utf-8")):
        yield names.get(entry.get("deviceCategory"), "unknown"), entry["userAgent"]


def fake_useragent(path):
    names = {"mobile": "smartphone", "tablet": "tablet", "desktop": "desktop"}
    for line in open(path, encoding="utf-8"):
        entry = json.loads(line)
        yield names.get(entry.get("type"), "unknown"), entry["useragent"]


def sampled(pairs, seed):
    by_kind = {}
    for kind, ua in pairs:
        ua = clean(ua)
        if ua:
            by_kind.setdefault(kind, set()).add(ua)
    rng = random.Random(seed)
    for kind in sorted(by_kind):
        agents = sorted(by_kind[kind])
        rng.shuffle(agents)
        for ua in agents[:CAP]:
            yield kind, ua


def held_out(ua):
    return hashlib.sha256(ua.encode("utf-8")).digest()[0] % 4 == 0


def main(fixtures, user_agents_json, fake_jsonl, out_dir):
    seen = set()
    parts = {False: [], True: []}
    for source in (
        sampled(matomo(fixtures), 1),
        sampled(user_agents(user_agents_json), 2),
        sampled(fake_useragent(fake_jsonl), 3),
    ):
        for kind, ua in source:
            if ua not in seen:
                seen.add(ua)
                parts[held_out(ua)].append(f"person\t{kind}\t{ua}\n")
    for held, name in ((False, "people.tsv"), (True, "people_held_out.tsv")):
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as out:
            out.writelines(parts[held])


if __name__ == "__main__":
    main(*sys.argv[1:5])
