# Bulwark's English messages: the reference catalogue every other language mirrors, key for
# key (app/src/i18n/mod.rs says how languages are chosen and added). Keys name where a text
# appears (page or part, then what it is); Fluent syntax: https://projectfluent.org/fluent/guide/

language-name = English

## Counts used in several places

count-runs = { $count ->
    [one] { $count } run
   *[other] { $count } runs
}
count-sessions-ended = { $count ->
    [one] { $count } session ended.
   *[other] { $count } sessions ended.
}

## Frame: navigation, who is signed in, the maintenance banner

app-tagline = Scheduled jobs that must not silently fail.
nav-label = Main
nav-overview = Overview
nav-jobs = Jobs
nav-runs = Runs
nav-failed = Failed queue
nav-traffic = Traffic
nav-notifications = Notifications
nav-settings = Settings
nav-sign-out = Sign out
nav-language = Language
banner-maintenance-link = Maintenance
role-admin = admin
role-viewer = viewer
paused-confirm = Bulwark is paused ({ $reason }, by { $by }). Start this run anyway?

## Common words

loading = Loading…

## Sign-in page

login-title = Sign in
login-username = Username
login-password = Password
login-code = Code from your authenticator app, or a recovery code
login-submit = Sign in
login-with = Sign in with { $provider }
login-providers = Company sign-in
login-submitting = Signing in…
sign-in-refused-title = Sign-in refused
sign-in-refused-again = Back to sign-in
sign-in-refused-no-group = None of your groups gives you access to this console. Ask an administrator to add you to one.
sign-in-refused-disabled = Your account here is disabled. Ask an administrator.
sign-in-refused-name-taken = A local account already has your name. An administrator must link it to your company sign-in first (Settings → Users, or bulwark user link).
sign-in-refused-no-name = Your company sign-in gave no name that can be a username here.
sign-in-refused-bad-state = This sign-in link was used already, has expired or was started in another browser. Start again.
sign-in-refused-bad-token = Your company sign-in's answer failed its checks. Start again; if it happens again, tell an administrator.
sign-in-refused-provider = The company sign-in did not complete. Start again.

## Not found

not-found-title = Not found
not-found-text = There is no page at this address.
not-found-back = Back to the overview

## Account page

account-title = Account
second-factor-heading = Second factor
second-factor-not-local = You sign in through your company's sign-in; its second factor is the one that counts.
second-factor-is-on = On: signing in asks for a code from your authenticator app.
second-factor-is-off = Off: signing in asks for your password only.
second-factor-required = Administrators here must add a second factor before anything else.
second-factor-set-up = Set up an authenticator app
second-factor-scan = Scan this code with an authenticator app (such as Google Authenticator, Microsoft Authenticator or 1Password).
second-factor-or-type = Or type this key into it:
second-factor-code = The code it shows
second-factor-turn-on = Turn on
second-factor-codes-once = Your recovery codes, shown only now. Keep them somewhere safe: each signs in once in place of a code.
second-factor-turn-off = Turn off
account-must-change = An administrator set your password. Choose your own to go on.
account-password-heading = Change your password
account-current-password = Current password
account-new-password = New password
account-change-password = Change password
account-password-changed = Password changed. Your other sessions were signed out.
account-sessions-heading = Where you are signed in
account-sign-out-elsewhere = Sign out everywhere else
account-session-signed-in = Signed in
account-session-last-seen = Last seen
account-session-address = Address
account-session-browser = Browser
account-this-session = this session
account-sign-out = Sign out
account-language-heading = Language
account-language-label = Language of the console
account-language-browser = Follow the browser
account-language-save = Save
account-language-saved = Saved.
account-language-unknown = "{ $tag }" is not a language Bulwark speaks; choose one of { $known }.

## Units (durations are rounded to one or two units: 2 h 5 min)

unit-ms = { $n } ms
unit-s = { $n } s
unit-min = { $n } min
unit-h = { $n } h
unit-d = { $n } d
unit-percent = { $n } %

## Times relative to now

time-ago = { $time } ago
time-in = in { $time }

## Shared by several pages

table-actions = Actions
action-retrigger = Re-trigger

## Overview

overview-tiles-label = Status at a glance
overview-versus-same = same as the 24 h before
overview-versus-more = +{ $n } vs the 24 h before
overview-versus-fewer = −{ $n } vs the 24 h before
overview-tile-runs = Runs, last 24 h
overview-tile-success = Succeeded, last 24 h
overview-success-detail = { $dead } dead; { $before } the 24 h before
overview-success-dead = { $dead } dead
overview-success-none = no run ended
overview-tile-running = Running now
overview-tile-retrying = Waiting to retry
overview-tile-failed = In the failed queue
overview-failed-detail = oldest waiting { $oldest }; { $joined } joined in 24 h
overview-failed-empty = empty
overview-tile-failing = Jobs failing now
overview-failing-escalated = { $n } escalated
overview-tile-late = Tick lateness, p95
overview-late-before = { $before } the 24 h before
overview-tile-deliveries = Deliveries failed
overview-deliveries-detail = mail { $mail }, chat { $chat }; { $waiting } waiting
overview-tile-nodes = Nodes
overview-nodes-live = { $n } live
overview-nodes-lost = { $n } lost
overview-nodes-none-lost = none lost
overview-tile-traffic = Page views today
overview-traffic-people = { $n ->
    [one] { $n } person
   *[other] { $n } people
}
overview-traffic-detail = { $bots } bots; yesterday { $people_before } people, { $bots_before } bots
overview-attention-heading = Needs attention
overview-attention-none = Nothing: every job's latest run succeeded or is still going.
overview-attention-job = Job
overview-attention-run = Latest run
overview-attention-since = Failing since
overview-attention-error = Error
overview-slow-heading = Slow attempts
overview-slow-explained = Longer than the job ever should take: 1.5 × the slowest of its usual runs (P99 of the last hundred successes), and a second more at least.
overview-waiting-heading = Waiting for a node
overview-waiting-item = due { $since }; no live instance may run it: { $asks }
overview-pools-heading = Pools
overview-pool-item = { $running } of { $size } running, { $waiting } waiting
overview-slow-attempt = { $job } #{ $run } attempt { $attempt }
overview-slow-running = { $time } so far, still running
overview-next-heading = Next ticks
overview-next-none = No enabled job has a tick ahead.
overview-failures-heading = Last failures
overview-failures-none = No run has ended dead.
overview-chart-heading = Runs per hour, last 24 hours
overview-chart-explained = Bars: runs created each hour, by how they ended so far. Line: the share of the ended runs that failed.
overview-chart-axis-failed = failed %
overview-chart-succeeded = Succeeded
overview-chart-failed = Failed
overview-chart-other = In progress / other
overview-chart-failure-rate = Failure rate %
overview-chart-worst = Most failures in one hour: { $n } at { $hour }.
overview-chart-empty = No runs yet: once jobs run, each hour shows how they ended.
overview-chart-summary = { $total } runs in the last 24 hours: { $ok } succeeded, { $failed } dead, { $other } in progress or otherwise ended.

## Names of states and kinds

run-status-pending = pending
run-status-running = running
run-status-retry_wait = retry wait
run-status-succeeded = succeeded
run-status-dead = dead
run-status-skipped = skipped
run-status-cancelled = cancelled
run-status-blocked = blocked
run-status-awaiting_ping = awaiting ping
run-status-waiting_for_node = waiting for a node
outcome-succeeded = succeeded
outcome-failed = failed
outcome-timed_out = timed out
outcome-interrupted = interrupted
job-kind-http = HTTP
job-kind-command = command
job-kind-builtin = built-in
job-kind-watch = watched
job-state-enabled = enabled
job-state-disabled = disabled
job-state-paused = paused
job-state-failing = failing

## Filters and actions on several pages

filter-any = any
filter-apply = Filter
action-delete = Delete
action-delete-confirm = Yes, delete
action-cancel = Cancel

## Jobs

jobs-new = New job
jobs-filter-text = Name or description
jobs-filter-kind = Kind
jobs-filter-state = State
jobs-filter-tag = Tag
jobs-filter-clear = Show every job
jobs-filter-matches = { $shown } of { $total } jobs match.
jobs-none = No jobs yet.
jobs-none-admin = Define the first one with New job.
jobs-bulk-done = { $count ->
    [one] { $count } job changed.
   *[other] { $count } jobs changed.
}
jobs-bulk-selected = { $count } selected:
jobs-bulk-tag-placeholder = tag
jobs-bulk-tag = Add tag
jobs-bulk-untag = Remove tag
jobs-enable = Enable
jobs-disable = Disable
jobs-pause = Pause
jobs-resume = Resume
jobs-select = Select
jobs-select-one = Select { $name }
jobs-col-name = Name
jobs-col-schedule = Schedule
jobs-col-last = Last result
jobs-col-strip = Last { $count } runs
jobs-col-rate = 7-day success
jobs-col-p95 = P95 duration
jobs-col-next = Next fire
jobs-next-paused = paused (due { $due })
jobs-rate-title = { $succeeded } of { $ended } ended runs in 7 days succeeded
jobs-never-ran = never ran
jobs-strip-empty = no runs yet
jobs-strip-label = last { $count } runs: { $succeeded } succeeded, { $dead } dead, { $other } other
jobs-run-now = Run now
jobs-run-now-params = Run now…
jobs-more = More
jobs-delete-confirm = Delete { $name } and its { $count ->
    [one] { $count } run
   *[other] { $count } runs
}?
trigger-cron = schedule
trigger-manual = by hand
trigger-retrigger = re-triggered
trigger-recovery = recovery
trigger-fallback = fallback
trigger-ping = ping
trigger-backfill = backfill
error-class-transient = transient
error-class-permanent = permanent
error-class-timeout = timeout
error-class-interrupted = interrupted
error-class-missed = missed
error-class-too_fast = too fast

## Runs

runs-filter-job = Job
runs-filter-status = Status
runs-filter-since = Created within
runs-since-any = any time
runs-since-hour = the last hour
runs-since-day = the last 24 hours
runs-since-week = the last 7 days
runs-none = No runs match.
runs-capped = Showing the newest { $count } runs that match; narrow the filter (job, status, tag, age) to see the others.
runs-col-run = Run
runs-col-trigger = Trigger
runs-col-scheduled = Scheduled for
runs-col-attempts = Attempts
runs-col-error = Last error

## Paging

paging-newest = Newest
paging-older = Older →

## Failed queue

failed-lead = Runs that could not succeed, kept with their whole history until someone acts.
failed-retriggered-many = { $count ->
    [one] { $count } run re-triggered.
   *[other] { $count } runs re-triggered.
}
failed-retriggered-one = Re-triggered as run #{ $run }.
failed-filter-class = Error class
failed-filter-from = From
failed-filter-to = To
failed-filter-text = Message contains
failed-matching = { $count ->
    [one] dead run matches.
   *[other] dead runs match.
}
failed-by-job = By job:
failed-by-class = By class:
failed-class-unknown = unknown { $count }
failed-rate-before = Release at most
failed-rate-after = runs per minute.
failed-retrigger-selected = Re-trigger selected ({ $count })
failed-retrigger-all = Re-trigger all matching…
failed-confirm-selected = Re-trigger the { $count ->
    [one] selected run
   *[other] { $count } selected runs
}, { $rate } per minute?
failed-confirm-all = Re-trigger all { $count ->
    [one] { $count } run
   *[other] { $count } runs
} matching this filter, { $rate } per minute?
failed-confirm-yes = Yes, re-trigger
failed-empty = Nothing in the queue matches.
failed-col-first = First failure
failed-col-last = Last failure
failed-col-class = Class
failed-col-message = Last message
failed-select-run = Select run { $run }
failed-reason = Reason
failed-reason-discard = why discard?
failed-reason-resolve = how was it handled?
failed-discard = Discard
failed-resolve = Resolve
failed-discard-ask = Discard…
failed-resolve-ask = Resolve…

## A run's page

run-title = Run #{ $run } of { $job }
run-next-attempt = Next attempt
run-finished = Finished
run-business-date = Business date
run-from-backfill = (backfill #{$id})
run-idempotency-key = Idempotency key
run-policy = Policy in force
run-policy-recorded = As recorded
run-timeout-override = Timeout override
run-retry-override = Retry override
run-this-run-only = { $what }, this run only
run-parameters = Parameters
run-cancel-requested = Cancelling
run-cancel-requested-at = cancelled at { $at }: its node is stopping the attempt
run-children = Shards
run-shard = Shard
run-shard-of = { $index } of { $total }, part of
run-children-going = { $going } of { $total } still going
run-children-failed = { $failed } of { $total } failed
run-children-cancelled = { $cancelled } of { $total } stopped
run-children-succeeded = All { $total } succeeded
run-retrigger-of = Re-trigger of
run-retriggered-as = Re-triggered as
run-left-queue = Left the failed queue
run-resolution = { $how } by { $by } at { $at }
run-held = held
run-release = Release it now
run-no-attempt = No attempt yet.
run-col-started = Started
run-col-duration = Duration
run-col-timeout = Timeout
run-col-outcome = Outcome
run-col-message = Message
run-col-node = Node
run-col-load = Load
run-audit = Audit
run-audit-none = Nobody has acted on this run.
run-override-timeout = Timeout for this run only (optional)
run-override-timeout-example = e.g. 10m
run-override-retry = Another retry policy, once
run-retrigger-now = Re-trigger now
run-attempt-running = running…
run-attempt-slow = (slow)
run-attempt-stalled = (stalled: no output)
run-no-retry-spent = no retry spent
run-no-retry-spent-title = Handed back at shutdown: the retry limit is not touched
run-output-so-far = output so far
run-output = output
log-title = Output
log-attempt = Attempt
log-stream = Stream
log-stream-both = stdout and stderr
log-stream-stdout = stdout only
log-stream-stderr = stderr only
log-mark = Mark
log-goto = Line
log-goto-button = Go
log-download = Download
log-no-attempt = No attempt has started yet.
log-summary = { $lines } lines, { $size } MB kept
log-running = still running
log-omitted = { $size } MB in { $lines } lines left out here (over run_log_max_mb)
log-first = First
log-earlier = Earlier
log-later = Later
log-last = Last
log-empty = Nothing printed.
log-search-too-short = Search for at least { $count } characters.
runs-search = Search output
runs-search-button = Search
runs-search-none = No line of any run's output holds “{ $text }”.
runs-search-found = { $count } lines found, newest run first
runs-search-col-line = Line

## Maintenance

maintenance-banner = { $what } by { $by } since { $since } UTC{ $until }: { $reason }
maintenance-banner-all = Bulwark is paused
maintenance-banner-tag = Jobs tagged { $tag } are paused
maintenance-banner-until = { " " }until { $until } UTC
maintenance-banner-open = { " " }until someone resumes
maintenance-every-job = Every job
maintenance-tagged = Jobs tagged { $tag }
maintenance-until-resumed = until someone resumes
maintenance-end-now = End now
maintenance-col-pauses = Pauses
maintenance-col-from = From
maintenance-col-until = Until
maintenance-col-by = By
maintenance-col-reason = Reason
maintenance-explained = While jobs are paused no cron run and no retry of them starts; attempts already running finish. Ticks that fall in the pause follow each job's misfire policy when it ends. Run now and re-trigger still work, after a confirmation.
maintenance-now = Now
maintenance-not-paused = Not paused: jobs run on their schedules.
maintenance-resume-all = Resume everything now
maintenance-paused-jobs = Paused on their own: { $jobs }.
maintenance-paused-jobs-link = Show them on the Jobs page
maintenance-pause-heading = Pause all now
maintenance-reason-banner = Reason (everyone sees it in the banner)
maintenance-until-optional = Until (optional: 2h, 30m or 2026-12-24 17:00 UTC)
maintenance-pause-all = Pause all
maintenance-ahead = Windows ahead
maintenance-ahead-none = None scheduled.
maintenance-starts = Starts (UTC)
maintenance-ends = Ends (UTC)
maintenance-only-tag = Only jobs tagged (optional)
maintenance-schedule = Schedule the window

## Audit log

audit-title = Audit log
audit-when = When
audit-who = Who
audit-what = What
audit-on = On
audit-details = Details

## API tokens (Settings)

tokens-heading = API tokens
tokens-created = Token { $name } created. Copy it now: it is not shown again.
tokens-explained = For the systems around Bulwark: send "{ $header }" to the API and to /metrics. A token reads, starts runs (of every job, or of the jobs with its tags) or administers, for as long as you created it for and while you keep that role; it works for the API only, never for these pages.
tokens-api-reference = The API reference
tokens-none = No tokens yet.
tokens-role = Role
tokens-created-col = Created
tokens-expires-col = Expires
tokens-last-used = Last used
tokens-created-by = { $at } by { $by }
tokens-never = never
tokens-revoke = Revoke
tokens-expires-label = Expires (30d, 12h, 2027-06-30, never; blank: 90 days)
tokens-create = Create token
tokens-state-active = active
tokens-state-revoked = revoked
tokens-state-expired = expired
tokens-scope = Scope
tokens-owner = Owner
tokens-scope-read = read
tokens-scope-trigger = trigger runs
tokens-scope-admin = admin
tokens-scope-tagged = { $scope } (tagged { $tags })
tokens-tags-label = Tags (trigger tokens; blank: every job)
tokens-used-from = { $at } from { $from }
tokens-state-stopped = stopped by its owner's account

## API reference

yes = yes
no = no
api-title = API
api-intro = JSON under /api/v1, authenticated with "Authorization: Bearer <token>". Errors are application/problem+json; lists are {"{"}"items": […], "next": cursor{"}"}.
api-tokens-link = Settings → API tokens
api-parameter = Parameter
api-in = In
api-required = Required
api-what = What
api-body = Body:

## Channels (Notifications)

channel-kind-email = e-mail
channel-kind-wecom = WeCom
channel-kind-dingtalk = DingTalk
channel-kind-feishu = Feishu
channel-kind-slack = Slack
channel-kind-webhook = webhook
delivery-status-pending = pending
delivery-status-sent = sent
delivery-status-failed = failed
delivery-status-summarised = in a summary
channels-none = No channels yet.
channels-heading = Channels
channels-explained = Chat robots and webhooks for alerts. A robot's URL carries its token: it is stored encrypted and only its host is shown.
channels-where = Where
channels-last-answer = Last answer
channels-signed = (signed)
channels-send-test = Send test
channels-edit = Edit
channels-addresses-edit = Addresses (commas between)
channels-new-url = New URL (blank: keep)
channels-new-secret = New signing secret (blank: keep)
channels-remove-secret = Remove the signing secret
channels-remove = Remove
channels-add-heading = Add a channel
channels-url = URL
channels-secret = Signing secret (optional)
channels-addresses = Addresses (e-mail)
channels-add = Add channel
deliveries-heading = Channel messages
deliveries-explained = One row per alert and channel. DingTalk and WeCom take 20 messages a minute per robot: alerts beyond that wait and go out together as one summary.
deliveries-none = No channel messages yet.
deliveries-queued = Queued
deliveries-channel = Channel
deliveries-answer = Platform's answer
deliveries-held = held for the rate limit until { $at }
deliveries-next-try = next try { $at }
deliveries-in-summary = sent in summary #{ $summary }
deliveries-resend = Resend

## Mail (Notifications)

mail-status-pending = pending
mail-status-sent = sent
mail-status-written = written
mail-status-failed = failed
mail-heading = Mail
mail-route = Mail goes to:
mail-to = To
mail-test-delivered = Delivered ({ $status }): { $answer }
mail-test-not-delivered = Not delivered ({ $status }). The server said: { $answer } The mail stays in the outbox below.
mail-digest-everyone = everyone any job alerts
mail-digest-and-channels = and to the channels { $channels }
mail-digest-summary = The daily digest goes to { $to }{ $channels } at { $time }.
mail-viewer-note = You are signed in as a viewer: an administrator changes these.
mail-digest-heading = Daily digest
mail-digest-to = Recipients (commas between; empty: everyone any job alerts)
mail-digest-channels = Channels for the digest and trend alerts (names, commas between)
mail-digest-time = Time of day ({ $zone })
mail-digest-job-before = The time is the schedule of the
mail-digest-job = mail-digest job
mail-digest-job-after = ; its retries and history are there.
mail-test-heading = Send a test mail
mail-test-send = Send test mail
mail-routes-heading = Alerts per job
mail-routes-explained = A job's first failed run mails its recipients; after the set number of failed runs in a row one escalation goes out; the first success after mails that it recovered. Change them in the job's editor.
mail-routes-to = Alerts to
mail-routes-after = Escalate after
mail-routes-escalate-to = Escalate to
mail-routes-escalate-channels = Escalation channels
mail-routes-failed-runs = { $count ->
    [one] { $count } failed run
   *[other] { $count } failed runs
}
outbox-heading = Outbox
outbox-all = all
outbox-empty = No mail here.
outbox-subject = Subject
outbox-answer = Server's answer / last error
outbox-preview = Preview
outbox-html-part = HTML part

## The retry curve

retry-chart-wait = Wait before retry
retry-chart-cap = cap
retry-chart-total = Total wait so far
retry-chart-retry = retry
retry-chart-seconds = seconds
retry-chart-seconds-log = seconds (log scale)
retry-chart-jitter-floor = jitter floor
retry-chart-jitter-range = Jitter range

## Settings

settings-maintenance-note = : pause every job (or a tag) now or in a window ahead, and resume.
settings-users = Users
settings-viewer-note = You are signed in as a viewer: you can read everything, and an administrator makes changes.
settings-audit-note = Who created, changed, deleted, re-triggered, resolved or discarded what:
settings-mail-note = Where mail goes, the daily digest's recipients and time, a test mail and the outbox:
secrets-heading = Secrets
secrets-explained = Jobs refer to a secret as { $reference } in a URL, header, body, argument or parameter. Values are encrypted, filled in only when an attempt runs, and never shown again — not here, not in run output.
secrets-none = No secrets yet.
secrets-set-at = Set
secrets-value = Value
secrets-set = Set secret
secrets-set-done = Secret set.
secrets-replaced = Secret replaced.
nodes-explained = Each running instance heart-beats every { $heartbeat } s; one silent for more than { $lost } s is lost, and its runs are taken over when their leases expire.
nodes-none = No node has registered yet.
nodes-heartbeat = Last heartbeat
nodes-runs = Runs
nodes-mode-both = console and jobs
nodes-mode-jobs = jobs only
nodes-mode-web = console only
nodes-no-labels = no labels
nodes-no-commands = no commands
nodes-pooler-transaction = through a pooler in transaction mode (no LISTEN: wakes by polling)
nodes-clock = Clock
nodes-host = Host / address
nodes-version = Version
nodes-host-pid = { $host } pid { $pid } · { $addr }
nodes-skew-ahead = clock { $seconds } s ahead of the database: corrected (Bulwark keeps time by the database), but fix it with NTP
nodes-skew-behind = clock { $seconds } s behind the database: corrected (Bulwark keeps time by the database), but fix it with NTP
nodes-skew-jump = ; a clock this far off may also jump when it is fixed: runs could then be taken over while still running (fenced, but run twice)
node-state-live = live
node-state-lost = lost
node-state-stopped = stopped
users-last-sign-in = Last sign-in
users-change = Change
users-change-one = Change { $name }
users-make-viewer = Make viewer
users-make-admin = Make admin
users-sign-out-everywhere = Sign out everywhere
users-second-factor-off = Turn off second factor
users-apply = Apply
users-tokens-all = Disabling or deleting stops its tokens: { $names }.
users-tokens-demote = Making it a viewer stops: { $names }.
users-done = Done.
users-nothing = Nothing to change.
users-reset-heading = Reset a password
users-temporary-password = Temporary password
users-reset = Reset
users-reset-done = Password set; they choose their own at the next sign-in, and their sessions ended.
users-added = Added { $name } ({ $role }).
users-add-heading = Add a user
users-add = Add user
account-state-active = active
account-state-disabled = disabled
account-state-must-change = must change password

## Traffic: sites

sites-goals-heading = Goals
sites-goals-explained = A goal counts as converted a visit that viewed a page matching its pattern, or that sent its event (bulwark.event("Signup") from collect.js). The dashboard shows each goal's conversions and conversion rate; a page goal added now also counts the page views still kept.
sites-goals-none = No goal yet.
sites-goal-add-heading = Add a goal
sites-goal-name-example = Signup
sites-goal-name = Name
sites-goal-kind = Counts
sites-goal-kind-page = views of pages
sites-goal-kind-event = an event
sites-goal-target = Page pattern or event name
sites-goal-target-help = A page pattern is a path: * stands for any characters within one segment, ** for any characters (/signup/done, /blog/*, /docs/**).
sites-goal-add = Add goal
sites-goal-remove = Remove
sites-title = Sites
sites-back = ← Traffic
sites-open = No site is registered: any site that embeds the snippet can report page views here. Register yours to count only theirs (reports from other hosts are then refused).
sites-closed = Only the sites below can report; reports from other hosts are refused.
sites-console-users = People signed in to this console are never counted: not on its own pages, and not from their address on your sites.
sites-register-heading = Register a site
sites-host = Host
sites-register = Register
sites-this-console = { $host } (this console)
sites-excluded-none = none
sites-console-counted = The console's own pages are counted without a snippet.
sites-embed = Embed on every page (before </body>):
sites-pixel = Pages without JavaScript:
sites-not-counted = Not counted:
sites-excluded-label = Addresses not counted (one per line: 203.0.113.7, 10.0.0.0/8)
sites-excluded-save = Save exclusions
sites-remove = Remove this site (its counted page views stay)

## Traffic, shared

bot-category-search = search
bot-category-ai = AI
bot-category-social = social
bot-category-seo = SEO
bot-category-archive = archive
bot-category-monitoring = monitoring
bot-category-tool = tool
bot-category-other = other
traffic-range = Range
traffic-range-7d = last 7 days
traffic-range-today = today
traffic-range-yesterday = yesterday
traffic-range-30d = last 30 days
traffic-range-90d = last 90 days
traffic-visitors = Visitors
traffic-everyone = everyone
traffic-people = people
traffic-bots = bots
traffic-bot-category = Bot category
traffic-bot-source = Bot source
traffic-site = Site
traffic-all-sites = all sites

## Traffic: stored hits

hits-title = Stored hits
hits-path = Path contains
hits-ip = IP
hits-sort = Sort
hits-sort-newest = newest first
hits-sort-count = most hits first
hits-export = Export these rows as CSV
hits-none = No stored hits match.
hits-next = Next page →
hits-minute = Minute (UTC)
hits-col-path = Path
hits-method = Method
hits-user-agent = User agent
hits-referer = Referer
hits-status = Status
hits-country = Country
hits-locale = Locale
hits-bot = Bot
hits-count = Count
hits-person = person

## Traffic dashboard

traffic-preset-today = Today
traffic-preset-yesterday = Yesterday
traffic-preset-7d = Last 7 days
traffic-preset-30d = Last 30 days
traffic-preset-90d = Last 90 days
traffic-people-title = People
traffic-bots-title = Bots
traffic-everyone-title = Everyone
traffic-bot-hits = Bot hits
traffic-change-new = new in this period
traffic-change = { $pct } % vs the previous period ({ $before })
traffic-over-time = Hits over time
traffic-by-category = Bots by category
traffic-by-source = Bots by source
traffic-series-text = { $people } page views by people and { $bots } by bots; the busiest point, { $peak } UTC, had { $peak_hits }.
traffic-no-views = No page views in this range.
traffic-no-bots = No bot hits in this range.
traffic-live = Last hour, live
traffic-live-text = { $total } hits in the last hour ({ $human } people, { $bot } bots); { $unflushed } of them are still in this server's memory, not yet written.
traffic-category-chip = category:
traffic-source-chip = source:
traffic-all-categories = all categories
traffic-all-sources = all sources
traffic-to = to
traffic-show = Show
traffic-page-views = Page views
traffic-visits = Visits
traffic-unique-ips = Unique IPs
traffic-unique-pages = Unique pages
traffic-range-shown = { $from } to { $to } ({ $zone })
traffic-generated = { $count } of these page views are generated demo data. Remove them with { $command }.
traffic-all-sites-title = All sites
traffic-open = Any site that embeds collect.js can report page views here: no site is registered yet. Register yours to count only theirs.
traffic-register-sites = Register your sites
traffic-closed = Only registered sites can report.
traffic-sites-link = Sites and their snippets
traffic-direct = (direct)
traffic-referrers = Referrers
traffic-landing = Landing pages
traffic-browsers = Browsers
traffic-systems = Operating systems
traffic-devices = Devices
traffic-countries = Countries
traffic-countries-explained = People's page views by the country of their address (an offline database; private and unknown addresses are "Unknown").
traffic-country-unknown = Unknown
traffic-country-filter = Country: { $country }
traffic-country-clear = All countries
traffic-campaigns = Campaigns and channels
traffic-campaigns-explained = Where people's arrivals came from, by channel, and their page views of URLs tagged with utm_source, utm_medium and utm_campaign (or ref).
traffic-channels = Channels
traffic-campaign-tags = Campaigns (source / medium / campaign)
traffic-campaign-filter = Campaign: { $campaign }
traffic-campaign-clear = All campaigns
traffic-goals = Goals and events
traffic-goals-explained = Each goal's conversions (people's views of its pages, or its events), the visits that converted and their share of the site's people's visits; then the custom events people's browsers sent (bulwark.event in collect.js). Under a country, campaign or status filter, they count what the visits the filter keeps went on to do. Goals are added under Traffic → Sites.
traffic-goals-list = Goals
traffic-goals-none = No goal yet: add one under Traffic → Sites.
traffic-goal = Goal
traffic-goal-page = pages { $pattern }
traffic-goal-event = event { $name }
traffic-conversions = Conversions
traffic-goal-visits = Visits
traffic-conversion-rate = Conversion rate
traffic-events = Custom events
traffic-events-none = No custom event in this range.
traffic-event = Event · properties
traffic-events-count = Events
traffic-answers = Statuses and pages not found
traffic-answers-explained = How people's page views were answered, from the console's own pages and imported logs (the collect script cannot see responses), and the pages people were most often answered 404 for, with who linked to them.
traffic-statuses = Status codes
traffic-status-filter = Status: { $status }
traffic-status-clear = All statuses
traffic-status-unknown = unknown
traffic-not-found = Not found (404)
traffic-not-found-referrers = linked from
traffic-not-found-no-referrer = (no referrer)
traffic-ai = AI visibility
traffic-ai-explained = What each AI crawler fetched in this range and how it was answered, and which of people's most viewed pages no AI crawler fetched in the 30 days up to the range's end.
traffic-ai-referrals = People sent by AI assistants in this range: { $count }
traffic-ai-crawlers = AI crawlers
traffic-ai-unvisited = Popular pages no AI crawler fetched (30 days)
traffic-ai-all-visited = Every popular page was fetched by an AI crawler, or no AI crawler is in this view.
traffic-channel-direct = Direct
traffic-channel-search = Search
traffic-channel-social = Social
traffic-channel-ai-assistant = AI assistant
traffic-channel-email = Email
traffic-channel-paid = Paid
traffic-channel-referral = Other sites
traffic-people-explained = Page views by people; arrivals (a first page from elsewhere or typed in) for referrers and landing pages.
traffic-none-in-range = None in this range.
traffic-bot-categories = Bot categories
traffic-bot-sources = Bot sources
traffic-top-pages = Top pages
traffic-top-pages-explained = A page opens its stored hits;
traffic-all-hits = all stored hits
traffic-page = Page
traffic-hits = Hits

## Retry policy warnings (the numbers are the policy's own)

retry-warning-near-fixed = multiplier { $m } is close to a fixed interval: retries of many failing jobs bunch together instead of backing off (below { $below })
retry-warning-explosive = multiplier { $m } makes intervals explode: retry { $retry } waits { $wait } (above { $above })
retry-warning-untunable = past retry { $after } the delays swing wildly with small changes of the multiplier: { $detail }
retry-warning-untunable-swing = at retry { $retry }, +0.1 on M moves the wait by { $swing }
retry-warning-untunable-capped = only the cap keeps retry { $retry } from moving by { $swing } per +0.1 of M
retry-warning-steep-total = more than { $after } retries: the total wait grows steeply, to { $total } in all
retry-warning-overruns = retries overrun the next scheduled run: from retry { $retry } the waits add up to more than the cron period ({ $period })
retry-warning-tolerance = from retry { $retry } the waits add up to more than your tolerance of { $tolerance }

## The retry editor

jitter-none = none
jitter-full = full
jitter-equal = equal
jitter-decorrelated = decorrelated
retry-preset-fast = Fast task
retry-preset-fast-long = Fast task: 1 s, ×2, 5 retries, full jitter, cap 30 s — done within a minute
retry-preset-important = Important task
retry-preset-important-long = Important task: 30 s, ×2, 8 retries, equal jitter, cap 1 h — keeps trying for hours
retry-preset-realtime = Real-time callback
retry-preset-realtime-long = Real-time callback: 200 ms, ×2, at most 2 retries, no jitter
retry-preset-standard = Standard exponential backoff
retry-preset-standard-long = Standard exponential backoff: 10 s, ×2, 5 retries, full jitter, cap 10 min
retry-presets = Presets
retry-first = First interval F
retry-first-slider = First interval slider
retry-multiplier = Multiplier M
retry-multiplier-slider = Multiplier slider
retry-max = Max retries C
retry-max-slider = Max retries slider
retry-jitter = Jitter
retry-cap = Cap on one interval
retry-cap-none = none
retry-tolerance = Your tolerance for the total wait
retry-tolerance-example = e.g. 1h (not saved)
retry-tolerance-error = tolerance { $error }
retry-success-chance = Chance one attempt succeeds: { $pct } %
retry-fix-fields = Fix the highlighted fields to see the curve.
retry-total-wait = Total wait
retry-recovered-within = Recovered within { $count ->
    [one] { $count } retry
   *[other] { $count } retries
}
retry-dm = ∂d/∂M at retry { $retry }
retry-dn = ∂d/∂n at retry { $retry }
retry-per-m = { $wait } per +0.1 of M
retry-per-retry = { $wait } per retry
retry-one = retry { $retry }
retry-range = retries { $first }–{ $last }
retry-times-caption = If the first attempt failed now, in { $zone }:
retry-times-jitter = (waits are nominal; the range is what jitter may draw)
retry-col-retry = Retry
retry-col-waits = Waits
retry-col-after = After first failure
retry-col-at = Would start at
retry-col-recovered = Recovered by then

## The job editor

job-overlap = A tick while a run is still active
job-alert-channels = Alerts also go to channels
job-command-args = Arguments (one per line)
job-http-body = Body
job-cron = Cron (sec min hour day month weekday)
job-description = Description
job-escalate-after = Escalate after (failed runs in a row)
job-escalate-channels = Escalations go to channels (none ticked: the alert channels)
job-transient-codes = Exit codes that mean 'try again later'
job-timeout-factor = Factor
job-fallback = Fallback job
job-timeout-floor = Floor
job-timeout-cap = Hard cap
job-http-headers = Headers (one 'Name: value' per line)
job-dependants = Jobs that depend on this one (their next runs are held while it is failing)
job-alert-to = Mail on failure to
job-timeout-mode = Mode
job-builtin-params = Parameters (one key=value per line)
job-parameters = Parameters a run takes, one per line: name: type [= default] [required], then options after | — choices: a, b | pattern: ^…$ | max_length: N | min: N | max: N. HTTP jobs read {"$"}{"{"}param:name{"}"} in the URL's path or query, a header's value or the body, encoded for the place; commands get BULWARK_PARAM_NAME and JSON on stdin, and take {"$"}{"{"}param:name{"}"} as a whole argument only with choices or a pattern
job-command-program = Program
job-timeout-stall = Stall timeout (no output for this long ends the attempt; empty: none)
job-timeout-static = Static timeout (also used until enough samples exist)
job-http-expected = Statuses that mean success
job-tags = Tags (separated by commas: the service or team it belongs to)
job-exhausted-then = Then
job-misfire = Ticks missed while Bulwark was down
job-timeout-window = Window (recent successful runs)
job-kind-http-call = HTTP call
job-kind-command-long = Command
job-kind-builtin-long = Built-in task
job-kind-watch-long = Watched (runs elsewhere, pings)
job-watch-explained = The job runs somewhere else — a crontab, a systemd timer, a CI schedule — and pings its URL. Each tick of the schedule waits for a ping; none by the tick plus the grace is a failure, alerted like any other. Leave the cron empty and give "every" to expect a ping that long after the last one.
job-watch-grace = Grace (how late or early a ping may come)
job-watch-every = Every (instead of a cron, e.g. 1h)
job-watch-min-duration = Shortest a run may take (shorter is a failure)
job-watch-max-duration = Longest a run may take (longer alerts)
ping-heading = Ping URL
ping-explained = The job reports here: the URL alone when it succeeded, /start when it begins, /fail or /EXIT-CODE when it ends, /log for output on the way; add ?rid=ID to tell overlapping runs apart. A body is kept as the run's output. Anyone with the URL can ping it: keep it like a password.
ping-rotate = Make a new URL (the old one stops working)
ping-rotated = A new ping URL is in use.
durations-heading = How long its runs take
durations-none = No finished run with a duration yet.
durations-learning = { $count ->
    [one] One run so far
   *[other] { $count } runs so far
}; the usual band shows after ten successes.
durations-band = Usually { $low } to { $high } (P05–P95 of the latest successes); P99 { $p99 }. The last { $count } runs are drawn.
durations-seconds = seconds
durations-succeeded = succeeded
durations-failed = failed
durations-usual = usual (P05–P95)
durations-p99 = P99
durations-too-slow = too slow past
durations-too-fast = too fast below
job-overlap-skip = is skipped (and recorded)
job-overlap-queue = waits its turn
job-misfire-run-once = run once when it is back
job-misfire-skip = are skipped (and recorded)
job-timeout-mode-static = static
job-timeout-mode-p95 = learned: P95 of recent successes
job-timeout-mode-p99 = learned: P99 of recent successes
job-exhausted-dead = park the run in the failed queue
job-exhausted-skip = skip to the next tick (recorded)
job-exhausted-fallback = trigger a fallback job
job-title = Job { $name }
job-not-saved-fields = Not saved: { $count ->
    [one] { $count } field needs
   *[other] { $count } fields need
} attention — { $fields }
job-not-saved = Not saved: { $error }
job-read-only = You are a viewer: this definition is read-only.
job-basics = Basics
job-what-runs = What runs
job-builtin-task = Task
job-timezone = Time zone
job-next-fires = Next five fire times:
job-zone-unreadable = The server sent a table for { $zone } that this page cannot read; reload the page.
job-retry-policy = Retry policy
job-timeout-heading = Timeout per attempt
job-exhausted-heading = When retries run out
job-alerts = Alerts
job-saving = Saving…
job-save = Save job
job-timeout-from-static = the static setting
job-timeout-from-static-until = the static setting, until enough runs succeed to learn from ({ $samples } of { $needed } so far)
job-timeout-from-learned = { $percentile } of the last { $samples } successes ({ $raw }) × factor, within floor and hard cap
job-timeout-next = Next attempt's timeout: { $timeout } — from { $source }.
job-no-channels = No channels yet: add them under
job-param = { $name } ({ $kind })
job-param-required = { $name } ({ $kind }, required)
job-start-run = Start run
hook-heading = Trigger URL
hook-explained = For systems that cannot hold an API token: POST to the URL starts a run, parameters from the JSON body {"{"}"params": {"{"}…{"}"}{"}"}, an Idempotency-Key header works as on the API. Anyone with the URL can start runs: rotate it if it leaks. With a secret, callers sign as Standard Webhooks do: webhook-id, webhook-timestamp (within 5 minutes) and webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>.
hook-on-console = on this console's address
hook-none = No trigger URL.
hook-created = The new trigger URL. Copy it now: only its hash is kept, so it is not shown again.
hook-exists = This job has a trigger URL (shown once, when it was made; a new one replaces it).
hook-new = New trigger URL
hook-remove = Remove the trigger URL
hook-when-paused = While the job is paused
hook-when-paused-refuse = refuse (409): the caller tries again later
hook-when-paused-queue = queue: the run waits for the pause to end
hook-when-paused-save = Save
hook-when-paused-saved = Saved: the trigger URL stays the same.

## Alert mails (subjects keep the [Bulwark] tag mail filters rely on)

mail-queue-text = It is in the failed queue; re-trigger it there: { $link }
mail-queue-html = It is in the failed queue:
mail-queue-html-link = re-trigger it there.
mail-queue-next = It was { $status }; the next scheduled run will try again.
mail-no-message = (no message)
mail-failed-at = { $when }, after { $attempts ->
    [one] { $attempts } attempt
   *[other] { $attempts } attempts
}
mail-fact-job = Job
mail-fact-run = Run
mail-fact-failed = Failed
mail-fact-error = Error
mail-fact-message = Message
mail-first-failure-subject = [Bulwark] { $job } failed: { $class }
mail-first-failure-text = { $job } failed.
mail-first-failure-again = You will hear again if it keeps failing, and when it recovers.
mail-escalation-subject = [Bulwark] ESCALATION: { $job } failed { $count } runs in a row
mail-escalation-text = { $job } has failed { $count } consecutive runs since { $since }. The latest:
mail-recovered-subject = [Bulwark] { $job } recovered
mail-no-node-subject = [Bulwark] { $job } is waiting for a node
mail-no-node-text = Run #{ $run } of { $job } has waited { $waited } for a node: no live instance may run it ({ $asks }). It starts as soon as one that may is running.
chat-no-node = { $job } is waiting for a node
chat-no-node-asks = Asks for
chat-no-node-waited = Waiting for
no-node-asks-labels = it asks for { $labels }
no-node-asks-commands = a command job, and no live instance runs commands
mail-too-slow-subject = [Bulwark] { $job } ran too long
mail-too-slow-text = Run #{ $run } of { $job } took { $took }, longer than the { $limit } it should take at most (its setting, or 1.5 × its slowest usual run).
mail-recovered-text = { $job } succeeded again (run #{ $run }) after { $count ->
    [one] { $count } failed run
   *[other] { $count } failed runs
}.
mail-recovered-down = It was failing for { $down }.
mail-test-subject = [Bulwark] Test mail
mail-test-text = { $by } sent this from Bulwark ({ $console }) to check that mail arrives.

## Chat and webhook messages

chat-first-failure = { $job } failed: { $class }
chat-escalation = ESCALATION: { $job } failed { $count } runs in a row
chat-recovered = { $job } recovered
chat-too-slow = { $job } is taking longer than it ever should
chat-took = Took
chat-longest-usual = Longest expected
chat-test = Bulwark test message
chat-attempts = Attempts
chat-failing-since = Failing since
chat-failed-in-a-row = Failed in a row
chat-now = Now
chat-in-queue = in the failed queue
chat-down-for = Down for
chat-failed-runs = Failed runs
chat-sent = Sent
chat-open-run = Open the run
chat-full-digest = Full digest
chat-every-message = Every message
chat-recent-failures = Recent failures
chat-open-bulwark = Open Bulwark
mail-locale = Language of mails (alerts, digest, trends)
mail-locale-default = The configured default ({ $name })
channels-locale = Language of its messages
channels-locale-default = The configured default

## Policies in words (a run's page)

policy-retry = { $first } × { $m }, { $retries }, { $jitter }, { $cap }
policy-retries = { $count ->
    [one] up to { $count } retry
   *[other] up to { $count } retries
}
policy-no-jitter = no jitter
policy-jitter = { $jitter } jitter
policy-no-cap = no cap
policy-cap = capped at { $cap }
policy-timeout = timeout { $timeout }
policy-timeout-learned = timeout learned: { $percentile } of the last { $window } successes × { $factor }, between { $floor } and { $cap } ({ $initial } until there are enough)
policy-stall = , or { $stall } without output
policy-snapshot = { $retry }; { $timeout }

## Refusals (English mirrors the errors' own messages)

error-duration-empty = is empty; write a duration such as 500ms, 10s, 5m or 1h
error-duration-unit = '{ $text }' needs a unit: ms, s, m or h (for example 10s)
error-duration-malformed = '{ $text }' is not a duration; write it like 500ms, 10s, 5m or 1h30m
error-duration-fine = '{ $text }' is finer than a millisecond
error-duration-long = '{ $text }' is too long (at most 30 days)
error-retry-first = first interval { $error }
error-retry-first-zero = first interval must be greater than 0
error-retry-multiplier-nan = multiplier '{ $text }' is not a number; it must be between 1.0 and 8.0
error-retry-multiplier-range = multiplier must be between 1.0 and 8.0, not { $m }
error-retry-multiplier-precision = multiplier '{ $text }' has more than one decimal; use steps of 0.1 between 1.0 and 8.0
error-retry-max = max retries must be a whole number between 1 and 16, not { $text }
error-retry-jitter = jitter must be none, full, equal or decorrelated, not '{ $text }'
error-retry-cap = cap { $error }
error-retry-cap-below-first = cap ({ $cap }) must be at least the first interval ({ $first })
error-cron-empty = cron expression is required, e.g. 0 30 7 * * * (07:30:00 every day)
error-cron-fields = cron needs 6 fields, seconds first (sec min hour day month weekday); got { $count }: e.g. 0 30 7 * * * for 07:30:00 every day
error-cron-invalid = cron expression is invalid: { $detail }
error-cron-never = cron expression never fires
error-cron-zone = time zone '{ $zone }' is unknown; use an IANA name such as UTC, Europe/Berlin or Asia/Shanghai
error-username-empty = username is required
error-username-long = username must be at most 64 characters
error-username-chars = username may contain only lowercase letters, digits, '.', '_' and '-'
error-role = role must be 'admin' or 'viewer', not '{ $text }'
error-password-empty = password is required
error-password-short = password must be at least 8 characters
error-password-long = password must be at most 1024 characters
error-username-taken = a user named '{ $name }' already exists
error-login-bad = unknown username or wrong password
error-login-throttled = too many failed sign-ins; try again in { $minutes } minute(s)
error-busy = the server is busy checking other sign-ins; try again in a moment
error-last-admin = '{ $name }' is the last enabled administrator; make another administrator first
error-wrong-password = the current password is wrong
error-same-password = the new password must differ from the current one
error-sign-in = please sign in
error-forbidden = only administrators may { $action }
error-fields = { $count } field(s) need attention
error-not-found = { $what } was not found
error-password-change-required = choose a new password first (on the Account page)
error-password-login-off = password sign-in is turned off here: use your company sign-in
error-second-factor-required = add a second factor first (on the Account page)
error-login-code-required = enter the code your authenticator app shows (or a recovery code)
error-login-code-wrong = that code is wrong or was used already
error-second-factor-on = the second factor is on already; turn it off first to enrol a new one
error-second-factor-not-started = start the set-up first
error-second-factor-not-local = this account signs in through the company sign-in, which has its own second factor
error-second-factor-kept = administrators must keep a second factor here (require_totp_for_admins)
error-link-provider = no OpenID provider is named '{ $name }' in the configuration
error-link-subject = give the person's subject (sub) at the provider, at most 255 characters
error-link-taken = that identity already belongs to { $name }
users-sign-in = Sign-in
users-sign-in-password = password
users-sign-in-header = proxy header
users-link-heading = Link to company sign-in
users-link-provider = Provider
users-link-subject = Subject (sub) at the provider
users-link = Link
users-linked = Linked: they now sign in through the provider.
error-internal = the server could not complete this request; the cause is in its log
error-request-failed = request failed: { $detail }
noun-job = job { $id }
noun-run = run { $id }
noun-user = user '{ $name }'
noun-goal = goal '{ $name }' of { $site }
noun-site = site '{ $host }'
noun-mail = mail { $id }
noun-channel = channel '{ $name }'
noun-channel-message = channel message { $id }
noun-maintenance-window = maintenance window { $id }
noun-token = token '{ $name }'
noun-secret = secret '{ $name }'
noun-calendar = calendar "{$name}"
noun-backfill = backfill #{$id}
job-error-name-empty = name is required
job-error-name-long = name must be at most 128 characters
job-error-name-chars = name may contain only letters, digits, '-', '_' and '.'
job-error-program = program is required
job-error-exit-codes = transient exit codes are whole numbers separated by commas, e.g. 75
job-error-param-line = parameter line { $line } must look like 'key=value'
job-error-builtin = built-in task must be one of: { $tasks }
job-error-kind = kind must be one of { $kinds }, not '{ $text }'
job-error-overlap = overlap: { $error }
job-error-misfire = misfire: { $error }
job-error-fallback-missing = name the fallback job
job-error-fallback-self = a job cannot be its own fallback
job-error-exhausted = when retries run out: { $error }
job-error-depends-self = a job cannot depend on itself
job-error-param-undeclared = { "$" }{ "{" }param:{ $name }{ "}" } is used, and no parameter { $name } is declared
job-error-param-url-origin = { "$" }{ "{" }param:{ $name }{ "}" } cannot be in the URL's scheme, host or port: put it in the path or the query, where its value is percent-encoded
job-error-param-header-name = { "$" }{ "{" }param:{ $name }{ "}" } cannot be in a header's name; a header's value may hold it
job-error-param-body = { "$" }{ "{" }param:{ $name }{ "}" } can go in a JSON, form or plain-text body, where its value is encoded for it; set Content-Type to one of them
job-error-param-program = { "$" }{ "{" }param:{ $name }{ "}" } cannot be the program: the command reads the value as { $variable } or on standard input
job-error-param-part-of-argument = { "$" }{ "{" }param:{ $name }{ "}" } cannot be part of an argument: read the value as { $variable } or on standard input, or make the whole argument { "$" }{ "{" }param:{ $name }{ "}" } and declare its choices or a pattern
job-error-param-open-argument = { $name } can be an argument only when its values are an allow-list: declare its choices or an anchored pattern (a number: min 0 or more), or read the value as { $variable }
job-error-not-held = { $name } uses no parameter where it is not allowed: there is nothing to confirm
job-error-no-such-job = there is no job named '{ $name }'
job-error-name-taken = a job named '{ $name }' already exists
job-error-channel-missing = there is no channel named '{ $name }' (add it on the Notifications page or with bulwark channel add)
job-error-tags-full = { $name } already has { $max } tags, the most a job takes
job-error-held-resume = { $name } is held because it uses a parameter where it is no longer allowed: edit it, or confirm it may run as written
job-held-banner = Held since the upgrade: this job uses a parameter where it is no longer allowed, so it is paused instead of failing on every tick.
job-held-confirm = Run as written until the next edit
job-held-confirmed = Runs as written until its next edit, by an administrator's confirmation:
job-error-escalate-after = escalate after must be a whole number of failed runs between 1 and 100, not '{ $text }'
job-error-method = method must be one of { $methods }
job-error-url = URL must start with http:// or https:// and contain no spaces
job-error-header-line = header line { $line } must look like 'Name: value'
job-error-statuses = expected statuses are codes or ranges between 100 and 599, e.g. 200-299, 304
job-error-redirects = follow redirects must be one of { $choices }, not '{ $text }'
job-http-redirects = Follow redirects
job-redirects-same-origin = within the same origin
job-redirects-any = anywhere (its headers go along)
job-redirects-none = never
job-error-positive = { $label } must be greater than 0
job-error-duration = { $label } { $error }
job-error-timeout-mode = timeout mode: { $error }
job-error-window = window must be a whole number of runs between 5 and 1000, not '{ $text }'
job-error-factor = factor must be between 1.0 and 8.0 in steps of 0.1, not '{ $text }'
job-error-floor-cap = the floor must not be above the hard cap
job-error-static-cap = the static timeout must not be above the hard cap
job-label-timeout = timeout
job-label-floor = floor
job-label-hard-cap = hard cap
job-label-stall = stall timeout
job-label-value = value
digest-title = Bulwark daily digest { $day }
digest-succeeded = { " " }({ $rate } succeeded)
digest-failed = Failed
digest-in-queue = In the failed queue
digest-failing-job = { $job } ({ $failed } of { $runs } failed)
digest-failing-most = Failing most
digest-subject = [Bulwark] Daily digest { $day }: { $runs } runs, { $failed } failed, { $queue } in the failed queue
digest-waiting = waiting { $wait }
digest-hour-counts = { $ok } ok, { $failed } failed
digest-health = Bulwark health, { $from } to { $to } ({ $zone })
digest-col-job = Job
digest-col-runs = Runs
digest-col-success = Success
digest-col-p95 = P95
digest-col-trend = Trend
digest-col-timeouts = Timeouts
digest-col-retries = Retries
digest-col-slow = Slow
digest-col-tag = Tag
digest-col-jobs = Jobs
digest-no-tag = (no tag)
digest-by-tag = By tag
digest-unit-jobs = job(s)
digest-unit-runs = runs
digest-queue-heading = Failed queue: { $count } run(s)
digest-per-hour-text = Runs per hour (# succeeded, x failed)
digest-per-hour = Runs per hour
digest-console = The console: { $url }
digest-open-queue = Open the failed queue
trend-spike-title = { $recent } failed attempts in 5 minutes
trend-rate-title = { $percent } of attempts failing
trend-burst-title = a burst of { $class } errors
trend-spike-detail = { $recent } attempts failed in the last 5 minutes; the 24 hours before averaged { $usual } per 5 minutes.
trend-rate-detail = { $failed } of { $attempts } attempts ({ $percent }) failed in the last 15 minutes, above the { $limit } limit.
trend-burst-detail = { $count } of the { $recent } failures in the last 5 minutes were { $class } errors; the 24 hours before averaged { $usual } per 5 minutes.
trend-headline = Trend: { $title }
trend-what = What
trend-subject = [Bulwark] Trend: { $title }
trend-recent-failures = Recent failures
trend-failed-queue = The failed queue
trend-quiet = You will not hear about this again until it has been clear for a while.
error-secret-name-empty = a secret needs a name
error-secret-name-long = a secret's name is at most { $max } characters
error-secret-name-chars = '{ $name }' is not a secret name: use letters, digits, _, - and .
error-secret-empty = a secret's value must not be empty
error-tag-empty = a tag cannot be empty
error-tag-long = tag '{ $tag }' is longer than { $max } characters
error-tag-chars = tag '{ $tag }' may hold only letters a–z, digits, '-', '_' and '.', and must start with a letter or digit
error-tags-too-many = a job takes at most { $max } tags, not { $count }
error-pause-reason-empty = say why Bulwark is paused (the banner shows it to everyone)
error-pause-reason-long = the reason is longer than { $max } characters
error-time-empty = the time is empty; write one such as 2h, 30m or 2026-12-24 17:00 (UTC)
error-time-malformed = '{ $text }' is not a time; write a duration from now (2h, 30m) or a UTC time (2026-12-24 17:00)
error-window-end-passed = the end has already passed
error-window-end-before-start = the end must come after the start
error-already-paused = Bulwark is already paused: { $reason }; resume first to change the reason or the end
error-goal-target = a goal counts either pages (--page PATTERN) or an event (--event NAME), one of the two
error-goal-name-empty = a goal needs a name, such as Signup
error-goal-name-long = a goal's name has at most { $max } characters
error-goal-name-control = a goal's name cannot hold control characters
error-goal-pattern-slash = '{ $text }' is not a page pattern: it starts with /, such as /signup/done or /blog/*
error-goal-pattern-long = a page pattern has at most { $max } characters
error-goal-pattern-path = '{ $text }' is not a page pattern: a path without spaces, query (?) or fragment (#); * stands for a segment's characters, ** for any
error-goal-exists = { $site } already has a goal named { $name }
error-event-name-empty = an event needs a name, such as Signup
error-event-name-long = an event's name has at most { $max } bytes
error-event-name-control = an event's name cannot hold control characters
error-event-props-object = an event's properties are an object, such as {"{"}"plan": "pro"{"}"}
error-event-props-many = an event has at most { $max } properties
error-event-props-nested = an event's property is a string, a number or a boolean, not a list or an object
error-site-empty = a site is named by its host, such as shop.example.com
error-site-host = '{ $text }' is not a host name such as shop.example.com
error-site-host-long = a host name has at most { $max } characters
error-site-console = { $host } is the console's own host (public_url): it is counted without registering
error-channel-name = '{ $name }' is not a channel name: at most 64 letters, digits, _, - and .
error-channel-kind = a channel needs a kind
error-channel-to = an email channel needs at least one address (--to)
error-channel-url-missing = this kind of channel needs its URL (--url, or --url - to read it from stdin)
error-channel-url = the URL must start with https:// (or http://) and name a host
error-channel-secret = a webhook secret is written whsec_<base64>, as Standard Webhooks libraries expect
error-hook-when-paused = "{ $text }": choose refuse or queue
error-channel-taken = a channel named '{ $name }' already exists
error-channel-in-use = the channel '{ $name }' is in use by { $by }: take it out there first
error-channel-missing = there is no channel named '{ $name }'
error-digest-job-missing = the { $job } job is missing: it is created when a server starts
error-token-name-empty = a token needs a name (what uses it: deploy-pipeline, prometheus…)
error-token-name-long = a token's name is at most 64 characters
error-token-name-chars = '{ $name }' is not a token name: use letters, digits, _, - and .
error-token-expiry = '{ $text }' is not an expiry: write 30d, 12h, 8w, a date such as 2027-06-30, or never
error-token-date-passed = { $text } has passed: a token must expire in the future
error-token-too-long = a token expires within five years (or never)
error-token-past = a token must expire in the future
error-token-taken = a token named '{ $name }' exists already: revoke it first, or choose another name
error-token-tags-scope = only a trigger token is kept to tags: a read or admin token covers every job
error-token-scope = scope must be one of { $scopes }
error-token-owner-missing = there is no account named '{ $name }' to own the token
error-token-owner-disabled = { $name } is disabled: a disabled account cannot own a token
error-token-owner-role = { $name } is a viewer: a { $scope } token needs an administrator as its owner
error-time-of-day = '{ $text }' is not a time of day such as 08:00
error-email = '{ $text }' is not an e-mail address
error-test-mail-to = enter an address to send the test mail to
error-release-rate = release rate must be between 1 and 6000 runs per minute
error-select-run = select at least one run
error-select-job = select at least one job
error-say-why = say why, for the audit log
error-not-in-queue = run { $id } is not in the failed queue (it is not dead, or someone already handled it)
error-not-held = run { $id } is not held (it is not blocked)
error-params-json = not a JSON object of values: { $error }
error-name-session = name a session, or all of them
error-param-number = '{ $text }' is not a number
error-param-bool = '{ $text }' is not true or false
error-param-line = line { $line }: write a parameter as 'name: type [= default] [required] [| option: value]'
error-param-name = line { $line }: '{ $name }' is not a parameter name: letters, digits and _, not starting with a digit
error-param-type = line { $line }: the type of { $name } must be one of { $types }
error-param-default = line { $line }: the default of { $name }: { $error }
error-param-twice = line { $line }: { $name } is declared twice
error-param-too-many = a job declares at most { $max } parameters
error-param-none = the job declares no parameters
error-param-unknown = no parameter named { $name }; the job takes { $known }
error-param-kind = { $name } must be a { $kind }, not { $value }
error-param-long = { $name } is longer than { $max } bytes
error-param-required = { $name } is required
error-param-option = line { $line }: '{ $text }' is not an option; options are 'choices: a, b', 'pattern: ^…$', 'max_length: N', 'min: N' and 'max: N', each after ' | '
error-param-option-kind = line { $line }: { $option } does not apply to a { $kind } parameter
error-param-option-number = line { $line }: { $option } must be a number, not '{ $text }'
error-param-choices-empty = line { $line }: name the choices of { $name }, separated by commas
error-param-pattern = line { $line }: the pattern of { $name }: { $error }
error-param-pattern-anchored = a pattern must be anchored: start with ^ and end with $ (at most { $max } characters)
error-param-range = line { $line }: the min of { $name } is above its max
error-param-choice = { $name } must be one of { $choices }, not '{ $value }'
error-param-max-length = { $name } is longer than { $max } characters
error-param-pattern-mismatch = { $name } does not match { $pattern }
error-param-below = { $name } must be at least { $min }
error-param-above = { $name } must be at most { $max }
error-param-header-break = { $name } goes in a header, and a header's value cannot hold a line break
error-param-dot-segment = { $name } goes in the URL's path, where '.' and '..' would climb it
error-param-origin = the parameters would send the call to another host
error-watch-runs-elsewhere = { $job } is a watched job: it runs elsewhere and reports by pinging its URL, so Bulwark cannot start it
error-watch-retrigger = a watched job's run cannot be re-triggered (it runs elsewhere): resolve or discard it
job-error-watch-cron-and-every = a watched job takes a cron or an "every", not both
job-error-on-off-day = off-day ticks must be one of {$words}, not "{$text}"
job-error-calendar-every = a job watched "every" so long cannot follow a calendar; give it a cron
job-error-tick-unknown = ${"{"}tick:{$reference}{"}"} names nothing a tick has: use scheduled_at, business_date or business_date:FORMAT with date fields (%Y, %m, %d …)
job-error-tick-misplaced = a tick reference may stand only where a parameter may: in the URL's path or query, a header's value or the body
backfill-error-reversed = --from {$from} is after --to {$to}
backfill-error-future = {$to} is in the future (today is {$today} in the job's zone)
backfill-error-too-many = the range holds more than {$max} ticks: backfill it in parts
backfill-error-no-cron = the job has no cron to backfill (it is watched every so long)
backfill-error-watched = a watched job runs elsewhere: there is nothing to backfill
backfill-error-pace = parallel must be 1 to {$max}, per-minute at least 1
job-error-calendar-unknown = there is no calendar named "{$name}"
job-error-calendar-dom = with a calendar, the cron's day-of-month must be * (it is {$field}): the calendar picks the days
job-error-calendar-dow = with a calendar, the cron's day-of-week must be * or the calendar's base {$base} (it is {$field})
job-run-on = Run on nodes labelled (role=db, dc=sh; empty: any)
job-run-on-nodes = { $count } of { $live } live { $live ->
    [one] node
   *[other] nodes
} may run it now: { $nodes }
job-run-on-none = No live node may run it now ({ $live } live): its runs will wait as "waiting for a node" until one that may is running.
job-pool = Pool (at most its size of the pool's jobs run at once; empty: none)
job-error-run-on-watch = a watched job runs elsewhere: it has no node to run on
pool-error-name = a pool's name is letters, digits, "-", "_" or ".", at most 64 (not "{ $name }")
pool-error-size = a pool's size is 1 to { $most } runs at once, not { $size }
job-error-pool-unknown = there is no pool named "{ $name }": define it with [[pool]] in a jobs file
job-error-pool-watch = a watched job runs elsewhere: it takes no place in a pool
job-run-on-count = Run on every matching node ("all"; empty: one run per tick)
job-shards = Shards (a tick makes this many runs spread over the matching nodes; empty: none)
job-error-run-on-count = run on count is "all" or empty, not "{ $value }"
job-error-shards = shards is a whole number from 2 to { $max }, not "{ $value }"
job-error-spread-both = a job runs on every matching node or in shards, not both
job-error-spread-watch = a watched job runs elsewhere: it makes no child runs
job-error-spread-fallback = a job that runs on several nodes at once cannot start a fallback job: its failed parts wait in the failed queue
job-error-shard-unknown = "${"{"}shard:{ $name }{"}"}" names nothing a shard has: use index or total
job-error-shard-alone = the job refers to its shard but makes one run a tick: set shards or run on count "all"
labels-error-no-value = "{ $part }" has no "=value"
labels-error-name = label name "{ $name }": lower-case letters, digits, "-", "_" and ".", starting with a letter or digit, at most 63
labels-error-value = label "{ $name }": the value "{ $value }" must be 1 to 63 letters, digits, "-", "_" or "."
labels-error-repeated = label "{ $name }" is given twice
labels-error-too-many = { $count } labels: at most { $most }
calendar-error-name = a calendar's name is letters, digits, "-", "_" or ".", at most 64
calendar-error-base = base must be "mon-fri" or a list of weekdays such as ["mon", "tue"]
calendar-error-both = {$date} is both off and on
calendar-error-date = "{$text}" is not a date: write it as YYYY-MM-DD
calendar-error-in-use = calendar "{$name}" is followed by {$jobs}: change those jobs first
calendar-error-breaks = with this base, {$jobs} could no longer follow calendar "{$name}": {$reason}
job-error-watch-range = between { $low } and { $high }
job-error-watch-min-max = the longest a run may take must be longer than the shortest
error-idempotency-reused = this Idempotency-Key was sent before with other parameters: a retry sends the same ones, a new request a new key
noun-job-named = job '{ $name }'
noun-revision = revision { $revision } of { $job }
noun-trigger-url = this trigger URL
error-range-date = '{ $text }' is not a date like 2026-11-30
error-filter-category = category: { $error }
error-filter-country = country: "{ $value }" is not a two-letter country code (such as DE or CN) or "unknown"
error-filter-status = status: "{ $value }" is not an HTTP status code (a number from 100 to 999, such as 404)
error-filter-sort = '{ $text }' is not a sort: use newest or count
error-filter-after = '{ $text }' is not a page cursor
error-filter-day = { $field } must be a date like 2026-11-30, not '{ $text }'
error-filter-reversed = from ({ $from }) is after to ({ $to })
error-filter-class = error class: { $error }
error-filter-cursor = the page link is damaged; start from the first page
error-range-preset = '{ $text }' is not a range: use today, yesterday, 7d, 30d or 90d, or from and to dates
error-range-half-open = a custom range needs both a from and a to date
error-range-reversed = the from date { $from } is after the to date { $to }
error-range-future = the range ends on { $to }, which is after today ({ $today })
error-range-retention = traffic is kept { $days } days: the range must start on or after { $earliest }, not { $from }
error-range-type = '{ $text }' is not a visitor type: use all, human or bot
chat-summary = { $count } more alerts while the channel was at its rate limit
retry-chart-recovered = Past outages recovered
retry-chart-recovered-axis = % recovered
retry-recovered-past = Of this job's past outages, recovered within { $count ->
    [one] { $count } retry
   *[other] { $count } retries
}
evidence-title = What this job's own failures say
evidence-new-job = Once this job has run and failed, its failures show here what a policy would have recovered.
evidence-too-few = Only { $count } failure episodes on record; { $needed } are needed to go by, so the chance above is the guessed rate.
evidence-current-only = Only runs of revision { $revision }, the job as it is now
evidence-too-few-revision = Revision { $revision } has only { $count } failure episodes; { $needed } are needed to go by, so the chance above is the guessed rate.
evidence-unavailable = This job's failure history could not be read ({ $error }); the chance above is the guessed rate.
evidence-basis = Replayed against { $episodes } failure episodes of this job ({ $censored } never recovered): the share over by the time each retry starts.
evidence-col-starts = Starts after
evidence-col-edited = This policy
evidence-col-in-force = Policy in force
evidence-idle = adds under 1 %
evidence-summary = { $recovered } recovered, expected wait { $wait }
evidence-target = Recovery target
evidence-suggest = Suggest a policy
evidence-no-suggestion = No suggestion: fix the fields first.
evidence-suggestion = Suggested: recovers { $recovered } of past outages, { $wait } of waiting at most.
evidence-unreachable = No policy reaches the target: these outages outlast any schedule the editor allows. This one recovers the most with the least waiting.
evidence-outside-ranges = Reaching the target takes more than the sound ranges (multiplier 1.5–4, 3–10 retries).
evidence-already = The fields already hold this policy.
evidence-apply = Apply
digest-policies = Retry policies worth a look (replayed against each job's own failures):
digest-policy-recovers-few = recovers only { $recovered } of its { $episodes } past outages
digest-policy-waits-long = waits up to { $wait }, but the longest of its { $episodes } past outages it recovered from lasted { $longest }
digest-worse-after-change = Got worse after a change:
digest-change = revision { $revision } by { $actor } ({ $fields }): { $what }
digest-change-rate = succeeded { $before } → { $after }
digest-change-p95 = P95 { $before } → { $after }

calendars-heading = Work calendars
calendars-explained = Workdays for jobs that follow a calendar: the base rule's weekdays, less the off days, plus the make-up days. A job names one with calendar = "NAME".
calendars-none = No calendars yet.
calendars-edit = Edit
calendars-counts = {$off} off, {$on} make-up
calendars-base = Base rule
calendars-years = Years
calendars-days = Dates
calendars-jobs = Jobs following it
calendars-off = Off days (holidays)
calendars-on = Make-up workdays
calendars-lines = One date a line, YYYY-MM-DD then its name if it has one. The base rule is mon-fri or weekday names separated by commas (sat,sun).
calendars-save = Save calendar
calendars-saved = Calendar {$name} saved.
job-calendar = Work calendar (optional)
job-on-off-day = A tick on an off day
job-on-off-day-skip = is skipped (recorded with the day's name)
job-on-off-day-next = runs on the next workday, for its own date
job-preview-from = Next ticks from
job-preview-no-calendar = No calendar by that name (Settings → Work calendars).
job-preview-make-up = make-up workday
job-preview-skipped = off, skipped
job-preview-moved = off, runs on {$to}
backfill-heading = Backfill
backfill-explained = Run the job again for past business dates: one run per tick its calendar lets run, one after another unless told otherwise. Ticks that already have a run are left alone (with "rerun dead ticks", a tick whose run ended dead gets a new one). Preview first: it changes nothing.
backfill-from = From (business date)
backfill-to = To (inclusive)
backfill-parallel = At once, at most
backfill-per-minute = Started per minute, at most
backfill-rerun = Rerun dead ticks
backfill-preview = Preview
backfill-start = Start backfill
backfill-made = Backfill #{$id} started.
backfill-no-ticks = No tick to run in this range.
backfill-has-run = has run #{$id}
backfill-rerun-of = reruns #{$id}
backfill-pause = Pause
backfill-resume = Resume
backfill-cancel = Cancel
backfill-progress = {$done} of {$total} done
backfill-range = Business dates
backfill-done = Progress
backfill-by = By
backfill-state-running = running
backfill-state-paused = paused
backfill-state-cancelled = cancelled
backfill-state-done = done

revisions-heading = Revisions
revisions-none = No revision yet: the next save makes the first.
revisions-col-revision = Revision
revisions-col-at = Saved
revisions-col-actor = By
revisions-col-note = Note
revisions-col-runs = Runs
revisions-col-success = Succeeded
revisions-col-p95 = P95
revisions-col-field = Field
revisions-col-revision-n = Revision { $revision }
revisions-worse = worse than before
revisions-changes = Changes { $from } → { $to }
revisions-restore = Restore
revisions-restored = Restored as revision { $revision }.
revisions-restored-note = restored from revision { $revision }
revisions-diff-heading = What changed from revision { $from } to { $to }
revisions-same = The two revisions are the same.

## Scheduled traffic reports (app/src/i18n/report.rs)
report-title = Traffic report for { $site }, { $period }
report-subject = [Bulwark] { $site }, { $period }: { $people } people, { $views } page views
report-period = { $from } to { $to }
report-change = { $now } ({ $change } against the { $every ->
        [day] day
       *[week] week
    } before)
report-people = People
report-views = Page views
report-pages = Top pages
report-referrers = Referrers
report-campaigns = Campaigns
report-countries = Countries
report-bots = Bots ({ $hits } hits)
report-not-found = Not found (404)
report-none = none
report-open-dashboard = Open the dashboard
error-report-address = "{ $text }" is not an e-mail address
error-report-nobody = a report needs at least one address (--to) or channel (--channel)
error-report-channel = no channel named "{ $name }" (add it on the Notifications page first)
error-report-every = "{ $text }" is not how often a report goes out: day or week
noun-report = the report of { $site }
sites-reports-heading = Reports
sites-reports-explained = A site's traffic report goes out by mail and to chat channels every morning at 07:00 (the traffic-reports job): a daily one with yesterday's figures, a weekly one on Mondays with last week's, each against the period before. Mails are written in the language of mails, each channel's message in its own language.
sites-reports-none = No site has a report.
sites-report-every = Every
sites-report-every-day = day
sites-report-every-week = week
sites-report-to = Addresses
sites-report-to-example = owner@example.com, team@example.com
sites-report-channels = Channels
sites-report-help = Addresses and channel names, commas between; at least one of the two.
sites-report-set-heading = Set a report
sites-report-save = Save report
sites-report-off = Stop

## Share links (app/src/pages/share.rs)
share-title = Shared traffic
share-people = People
share-pages = Pages
share-password = This link has a password
share-open = Open
share-wrong-password = That is not this link's password
share-footer = A read-only view of people's visits, shared from Bulwark. Bots are counted, not shown.
noun-share = share link
sites-shares-heading = Share links
sites-shares-explained = A share link shows one site's people's figures to anyone who has it, without an account: no bots' details, no hits, no addresses. It can have a password and an expiry; making a new one ends the old. The link is shown once, when it is made.
sites-shares-none = No site is shared.
sites-share-site = Site
sites-share-protected = Password
sites-share-expires = Expires
sites-share-never = never
sites-share-revoke = Revoke
sites-share-make-heading = Share a site
sites-share-password-label = Password (optional)
sites-share-expires-label = Expires after (optional: 30d, 12h, 8w, a date)
sites-share-make = Make link
sites-share-made = The link (shown only now):
error-share-console = the console's own traffic is not shared

## Traffic spike alerts (app/src/i18n/traffic_alerts.rs)
traffic-alert-views-title = Traffic spike on { $site }: { $views } page views in an hour
traffic-alert-bots-title = Bots on { $site }: { $share } of an hour's hits
traffic-alert-not-found-title = { $count } pages not found on { $site } in an hour
traffic-recovered-views-title = Page views on { $site } are back to usual
traffic-recovered-bots-title = Bots on { $site } are back to their usual share
traffic-recovered-not-found-title = Pages not found on { $site } are back to usual
traffic-alert-views-detail = { $views } people's page views, { $usual } usual for this hour of the week
traffic-alert-bots-detail = { $bots } of { $hits } hits from bots
traffic-alert-not-found-detail = { $count } hits answered 404 (not found)
traffic-alert-hour = Hour
