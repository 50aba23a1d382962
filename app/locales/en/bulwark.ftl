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
login-submit = Sign in
login-submitting = Signing in…

## Not found

not-found-title = Not found
not-found-text = There is no page at this address.
not-found-back = Back to the overview

## Account page

account-title = Account
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
overview-slow-explained = Slower than the mean plus three standard deviations of the job's recent successes.
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
outcome-succeeded = succeeded
outcome-failed = failed
outcome-timed_out = timed out
outcome-interrupted = interrupted
job-kind-http = HTTP
job-kind-command = command
job-kind-builtin = built-in
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
jobs-delete-confirm = Delete { $name } and its { $count ->
    [one] { $count } run
   *[other] { $count } runs
}?
trigger-cron = schedule
trigger-manual = by hand
trigger-retrigger = re-triggered
trigger-recovery = recovery
trigger-fallback = fallback
error-class-transient = transient
error-class-permanent = permanent
error-class-timeout = timeout
error-class-interrupted = interrupted

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
run-idempotency-key = Idempotency key
run-policy = Policy in force
run-policy-recorded = As recorded
run-timeout-override = Timeout override
run-retry-override = Retry override
run-this-run-only = { $what }, this run only
run-parameters = Parameters
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
tokens-explained = For the systems around Bulwark: send "{ $header }" to the API and to /metrics. A token has a role like a person; it works for the API only, never for these pages.
tokens-api-reference = The API reference
tokens-none = No tokens yet.
tokens-role = Role
tokens-created-col = Created
tokens-expires-col = Expires
tokens-last-used = Last used
tokens-created-by = { $at } by { $by }
tokens-never = never
tokens-revoke = Revoke
tokens-expires-label = Expires (30d, 12h, 2027-06-30; blank: never)
tokens-create = Create token
tokens-state-active = active
tokens-state-revoked = revoked
tokens-state-expired = expired

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
