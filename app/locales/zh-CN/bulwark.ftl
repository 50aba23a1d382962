# Bulwark 简体中文消息目录：与 app/locales/en/bulwark.ftl 逐键对应。
# 术语：run 运行，attempt 尝试，retry 重试，failed queue 失败队列，dead 死信，alert 告警，
# escalation 升级告警，recovery 恢复，digest 日报，channel 通道，tag 标签，maintenance 维护。

language-name = 简体中文

## Counts used in several places

count-runs = { $count } 次运行
count-sessions-ended = 已结束 { $count } 个会话。

## Frame: navigation, who is signed in, the maintenance banner

app-tagline = 定时任务，失败绝不悄无声息。
nav-label = 主导航
nav-overview = 概览
nav-jobs = 任务
nav-runs = 运行记录
nav-failed = 失败队列
nav-traffic = 流量
nav-notifications = 通知
nav-settings = 设置
nav-sign-out = 退出登录
nav-language = 语言
banner-maintenance-link = 维护
role-admin = 管理员
role-viewer = 只读
paused-confirm = Bulwark 已暂停（{ $reason }，操作人 { $by }）。仍要启动这次运行吗？

## Common words

loading = 加载中…

## Sign-in page

login-title = 登录
login-username = 用户名
login-password = 密码
login-submit = 登录
login-submitting = 正在登录…

## Not found

not-found-title = 页面不存在
not-found-text = 这个地址没有页面。
not-found-back = 返回概览

## Account page

account-title = 账号
account-must-change = 管理员为你设置了密码，请先改成你自己的密码。
account-password-heading = 修改密码
account-current-password = 当前密码
account-new-password = 新密码
account-change-password = 修改密码
account-password-changed = 密码已修改，你在其他地方的会话已退出。
account-sessions-heading = 已登录的会话
account-sign-out-elsewhere = 退出其他所有会话
account-session-signed-in = 登录时间
account-session-last-seen = 最近活动
account-session-address = 地址
account-session-browser = 浏览器
account-this-session = 当前会话
account-sign-out = 退出
account-language-heading = 语言
account-language-label = 控制台语言
account-language-browser = 跟随浏览器
account-language-save = 保存
account-language-saved = 已保存。
account-language-unknown = 不支持“{ $tag }”，请从以下语言中选择：{ $known }。

## Units (durations are rounded to one or two units: 2 h 5 min)

unit-ms = { $n } 毫秒
unit-s = { $n } 秒
unit-min = { $n } 分钟
unit-h = { $n } 小时
unit-d = { $n } 天
unit-percent = { $n }%

## Times relative to now

time-ago = { $time }前
time-in = { $time }后

## Shared by several pages

table-actions = 操作
action-retrigger = 重新触发

## Overview

overview-tiles-label = 运行状况一览
overview-versus-same = 与前 24 小时持平
overview-versus-more = 比前 24 小时多 { $n }
overview-versus-fewer = 比前 24 小时少 { $n }
overview-tile-runs = 最近 24 小时运行
overview-tile-success = 最近 24 小时成功率
overview-success-detail = 死信 { $dead } 个；前 24 小时 { $before }
overview-success-dead = 死信 { $dead } 个
overview-success-none = 没有已结束的运行
overview-tile-running = 正在运行
overview-tile-retrying = 等待重试
overview-tile-failed = 失败队列
overview-failed-detail = 最早一条于 { $oldest }进入；24 小时内新增 { $joined } 条
overview-failed-empty = 空
overview-tile-failing = 正在失败的任务
overview-failing-escalated = 已升级 { $n } 个
overview-tile-late = 触发延迟（P95）
overview-late-before = 前 24 小时 { $before }
overview-tile-deliveries = 投递失败
overview-deliveries-detail = 邮件 { $mail }，消息通道 { $chat }；待投递 { $waiting }
overview-tile-nodes = 节点
overview-nodes-live = 在线 { $n } 个
overview-nodes-lost = 失联 { $n } 个
overview-nodes-none-lost = 无失联节点
overview-tile-traffic = 今日页面浏览
overview-traffic-people = 真人 { $n }
overview-traffic-detail = 爬虫 { $bots }；昨日真人 { $people_before }，爬虫 { $bots_before }
overview-attention-heading = 需要处理
overview-attention-none = 一切正常：每个任务最近一次运行都已成功或仍在进行。
overview-attention-job = 任务
overview-attention-run = 最近运行
overview-attention-since = 失败开始于
overview-attention-error = 错误
overview-slow-heading = 慢尝试
overview-slow-explained = 耗时超过该任务近期成功运行的均值加三倍标准差。
overview-slow-attempt = { $job } #{ $run } 第 { $attempt } 次尝试
overview-slow-running = 已耗时 { $time }，仍在运行
overview-next-heading = 即将触发
overview-next-none = 没有已启用的任务待触发。
overview-failures-heading = 最近失败
overview-failures-none = 还没有进入死信的运行。
overview-chart-heading = 最近 24 小时每小时运行数
overview-chart-explained = 柱：每小时创建的运行，按目前的结果分类。线：已结束运行中失败的比例。
overview-chart-axis-failed = 失败 %
overview-chart-succeeded = 成功
overview-chart-failed = 失败
overview-chart-other = 进行中 / 其他
overview-chart-failure-rate = 失败率 %
overview-chart-worst = 单小时失败最多：{ $hour } 共 { $n } 次。
overview-chart-empty = 还没有运行记录：任务运行后，这里按小时显示结果。
overview-chart-summary = 最近 24 小时共 { $total } 次运行：成功 { $ok }，死信 { $failed }，进行中或以其他方式结束 { $other }。

## Names of states and kinds

run-status-pending = 待运行
run-status-running = 运行中
run-status-retry_wait = 等待重试
run-status-succeeded = 成功
run-status-dead = 死信
run-status-skipped = 已跳过
run-status-cancelled = 已取消
run-status-blocked = 被阻塞
outcome-succeeded = 成功
outcome-failed = 失败
outcome-timed_out = 超时
outcome-interrupted = 被中断
job-kind-http = HTTP 请求
job-kind-command = 命令
job-kind-builtin = 内置任务
job-state-enabled = 已启用
job-state-disabled = 已停用
job-state-paused = 已暂停
job-state-failing = 失败中

## Filters and actions on several pages

filter-any = 全部
filter-apply = 筛选
action-delete = 删除
action-delete-confirm = 确认删除
action-cancel = 取消

## Jobs

jobs-new = 新建任务
jobs-filter-text = 名称或描述
jobs-filter-kind = 类型
jobs-filter-state = 状态
jobs-filter-tag = 标签
jobs-filter-clear = 显示全部任务
jobs-filter-matches = { $total } 个任务中有 { $shown } 个符合条件。
jobs-none = 还没有任务。
jobs-none-admin = 点击“新建任务”创建第一个。
jobs-bulk-done = 已修改 { $count } 个任务。
jobs-bulk-selected = 已选 { $count } 个：
jobs-bulk-tag-placeholder = 标签
jobs-bulk-tag = 添加标签
jobs-bulk-untag = 移除标签
jobs-enable = 启用
jobs-disable = 停用
jobs-pause = 暂停
jobs-resume = 恢复
jobs-select = 选择
jobs-select-one = 选择 { $name }
jobs-col-name = 名称
jobs-col-schedule = 调度
jobs-col-last = 最近结果
jobs-col-strip = 最近 { $count } 次运行
jobs-col-rate = 7 天成功率
jobs-col-p95 = P95 耗时
jobs-col-next = 下次触发
jobs-next-paused = 已暂停（原定 { $due }）
jobs-rate-title = 7 天内已结束的 { $ended } 次运行中成功 { $succeeded } 次
jobs-never-ran = 从未运行
jobs-strip-empty = 还没有运行
jobs-strip-label = 最近 { $count } 次运行：成功 { $succeeded }，死信 { $dead }，其他 { $other }
jobs-run-now = 立即运行
jobs-run-now-params = 立即运行…
jobs-more = 更多
jobs-delete-confirm = 删除 { $name } 及其 { $count } 次运行记录？
trigger-cron = 定时
trigger-manual = 手动
trigger-retrigger = 重新触发
trigger-recovery = 恢复补跑
trigger-fallback = 兜底任务
error-class-transient = 临时错误
error-class-permanent = 永久错误
error-class-timeout = 超时
error-class-interrupted = 被中断

## Runs

runs-filter-job = 任务
runs-filter-status = 状态
runs-filter-since = 创建时间
runs-since-any = 不限
runs-since-hour = 最近 1 小时
runs-since-day = 最近 24 小时
runs-since-week = 最近 7 天
runs-none = 没有符合条件的运行。
runs-capped = 只显示符合条件的最新 { $count } 次运行；缩小筛选范围（任务、状态、标签、时间）可查看其他记录。
runs-col-run = 运行
runs-col-trigger = 触发方式
runs-col-scheduled = 计划时间
runs-col-attempts = 尝试次数
runs-col-error = 最近错误

## Paging

paging-newest = 最新
paging-older = 更早 →

## Failed queue

failed-lead = 无法成功的运行保存在这里，连同完整的尝试记录，直到有人处理。
failed-retriggered-many = 已重新触发 { $count } 次运行。
failed-retriggered-one = 已重新触发，新运行为 #{ $run }。
failed-filter-class = 错误类型
failed-filter-from = 开始日期
failed-filter-to = 结束日期
failed-filter-text = 消息包含
failed-matching = 条死信符合条件。
failed-by-job = 按任务：
failed-by-class = 按错误类型：
failed-class-unknown = 未知 { $count }
failed-rate-before = 每分钟最多放行
failed-rate-after = 次运行。
failed-retrigger-selected = 重新触发所选（{ $count }）
failed-retrigger-all = 重新触发全部符合条件的…
failed-confirm-selected = 以每分钟 { $rate } 次的速度重新触发所选的 { $count } 次运行？
failed-confirm-all = 以每分钟 { $rate } 次的速度重新触发符合筛选条件的全部 { $count } 次运行？
failed-confirm-yes = 确认重新触发
failed-empty = 失败队列中没有符合条件的运行。
failed-col-first = 首次失败
failed-col-last = 最近失败
failed-col-class = 类型
failed-col-message = 最近消息
failed-select-run = 选择运行 #{ $run }
failed-reason = 原因
failed-reason-discard = 为什么丢弃？
failed-reason-resolve = 是如何处理的？
failed-discard = 丢弃
failed-resolve = 标记已处理
failed-discard-ask = 丢弃…
failed-resolve-ask = 标记已处理…

## A run's page

run-title = { $job } 的运行 #{ $run }
run-next-attempt = 下次尝试
run-finished = 结束时间
run-idempotency-key = 幂等键
run-policy = 生效的策略
run-policy-recorded = 原始记录
run-timeout-override = 超时覆盖
run-retry-override = 重试策略覆盖
run-this-run-only = { $what }，仅本次运行
run-parameters = 参数
run-cancel-requested = 正在取消
run-cancel-requested-at = 已于 { $at } 取消：所在节点正在停止本次尝试
run-retrigger-of = 重新触发自
run-retriggered-as = 已重新触发为
run-left-queue = 已移出失败队列
run-resolution = { $by } 于 { $at } { $how }
run-held = 已暂缓
run-release = 立即放行
run-no-attempt = 还没有尝试。
run-col-started = 开始时间
run-col-duration = 耗时
run-col-timeout = 超时
run-col-outcome = 结果
run-col-message = 消息
run-col-node = 节点
run-col-load = 负载
run-audit = 审计
run-audit-none = 还没有人对这次运行执行过操作。
run-override-timeout = 仅本次运行的超时（可选）
run-override-timeout-example = 例如 10m
run-override-retry = 本次改用其他重试策略
run-retrigger-now = 立即重新触发
run-attempt-running = 运行中…
run-attempt-slow = （慢）
run-attempt-stalled = （停滞：无输出）
run-no-retry-spent = 未消耗重试次数
run-no-retry-spent-title = 关机时交还：不计入重试上限
run-output-so-far = 目前的输出
run-output = 输出
log-title = 输出
log-attempt = 尝试
log-stream = 输出流
log-stream-both = stdout 和 stderr
log-stream-stdout = 仅 stdout
log-stream-stderr = 仅 stderr
log-mark = 标记
log-goto = 行号
log-goto-button = 跳转
log-download = 下载
log-no-attempt = 还没有开始任何尝试。
log-summary = 共 { $lines } 行，保存了 { $size } MB
log-running = 仍在运行
log-omitted = 此处省略了 { $lines } 行，共 { $size } MB（超过 run_log_max_mb）
log-first = 开头
log-earlier = 上一屏
log-later = 下一屏
log-last = 末尾
log-empty = 没有输出。
log-search-too-short = 请至少输入 { $count } 个字符。
runs-search = 搜索输出
runs-search-button = 搜索
runs-search-none = 没有任何运行的输出包含“{ $text }”。
runs-search-found = 找到 { $count } 行，最新的运行在前
runs-search-col-line = 行

## Maintenance

maintenance-banner = { $what }（操作人 { $by }，自 { $since } UTC 起{ $until }）：{ $reason }
maintenance-banner-all = Bulwark 已暂停
maintenance-banner-tag = 带标签 { $tag } 的任务已暂停
maintenance-banner-until = ，至 { $until } UTC
maintenance-banner-open = ，直到有人恢复
maintenance-every-job = 全部任务
maintenance-tagged = 带标签 { $tag } 的任务
maintenance-until-resumed = 直到有人恢复
maintenance-end-now = 立即结束
maintenance-col-pauses = 暂停范围
maintenance-col-from = 开始
maintenance-col-until = 结束
maintenance-col-by = 操作人
maintenance-col-reason = 原因
maintenance-explained = 任务暂停期间，不会启动新的定时运行和重试；已在运行的尝试会正常结束。暂停期间错过的触发，在暂停结束时按各任务的错过策略处理。“立即运行”和“重新触发”仍可使用，但需要确认。
maintenance-now = 当前
maintenance-not-paused = 未暂停：任务按计划运行。
maintenance-resume-all = 立即全部恢复
maintenance-paused-jobs = 单独暂停的任务：{ $jobs }。
maintenance-paused-jobs-link = 在任务页查看
maintenance-pause-heading = 立即全部暂停
maintenance-reason-banner = 原因（所有人都会在横幅中看到）
maintenance-until-optional = 结束时间（可选：2h、30m 或 2026-12-24 17:00 UTC）
maintenance-pause-all = 全部暂停
maintenance-ahead = 计划中的维护窗口
maintenance-ahead-none = 没有计划的维护窗口。
maintenance-starts = 开始（UTC）
maintenance-ends = 结束（UTC）
maintenance-only-tag = 仅限带此标签的任务（可选）
maintenance-schedule = 计划维护窗口

## Audit log

audit-title = 审计日志
audit-when = 时间
audit-who = 操作人
audit-what = 操作
audit-on = 对象
audit-details = 详情

## API tokens (Settings)

tokens-heading = API 令牌
tokens-created = 令牌 { $name } 已创建。请立即复制：它不会再次显示。
tokens-explained = 供 Bulwark 周边的系统使用：调用 API 和 /metrics 时发送请求头“{ $header }”。令牌可以只读、触发运行（所有任务，或带有其标签的任务）或管理，在你设定的期限内、且你保有相应角色时有效；它只能用于 API，不能登录这些页面。
tokens-api-reference = API 参考
tokens-none = 还没有令牌。
tokens-role = 角色
tokens-created-col = 创建
tokens-expires-col = 过期
tokens-last-used = 最近使用
tokens-created-by = { $by } 于 { $at }
tokens-never = 永不
tokens-revoke = 吊销
tokens-expires-label = 过期时间（30d、12h、2027-06-30、never；留空为 90 天）
tokens-create = 创建令牌
tokens-state-active = 有效
tokens-state-revoked = 已吊销
tokens-state-expired = 已过期
tokens-scope = 范围
tokens-owner = 所有者
tokens-scope-read = 只读
tokens-scope-trigger = 触发运行
tokens-scope-admin = 管理
tokens-scope-tagged = { $scope }（标签 { $tags }）
tokens-tags-label = 标签（仅 trigger 令牌；留空：所有任务）
tokens-used-from = { $at }，来自 { $from }
tokens-state-stopped = 因所有者账户而停用

## API reference

yes = 是
no = 否
api-title = API
api-intro = JSON 接口位于 /api/v1，使用请求头“Authorization: Bearer <token>”认证。错误以 application/problem+json 返回；列表格式为 {"{"}"items": […], "next": cursor{"}"}。
api-tokens-link = 设置 → API 令牌
api-parameter = 参数
api-in = 位置
api-required = 必填
api-what = 说明
api-body = 请求体：

## Channels (Notifications)

channel-kind-email = 邮件
channel-kind-wecom = 企业微信
channel-kind-dingtalk = 钉钉
channel-kind-feishu = 飞书
channel-kind-slack = Slack
channel-kind-webhook = Webhook
delivery-status-pending = 待发送
delivery-status-sent = 已发送
delivery-status-failed = 失败
delivery-status-summarised = 已合并发送
channels-none = 还没有通道。
channels-heading = 通知通道
channels-explained = 用于告警的群机器人和 Webhook。机器人 URL 中带有令牌：它加密保存，页面上只显示主机名。
channels-where = 目标
channels-last-answer = 最近应答
channels-signed = （已签名）
channels-send-test = 发送测试
channels-edit = 编辑
channels-addresses-edit = 邮箱地址（用逗号分隔）
channels-new-url = 新 URL（留空则不变）
channels-new-secret = 新签名密钥（留空则不变）
channels-remove-secret = 移除签名密钥
channels-remove = 删除
channels-add-heading = 添加通道
channels-url = URL
channels-secret = 签名密钥（可选）
channels-addresses = 邮箱地址（邮件通道）
channels-add = 添加通道
deliveries-heading = 通道消息
deliveries-explained = 每条告警在每个通道各占一行。钉钉和企业微信的每个机器人每分钟最多接收 20 条消息：超出的告警会等待，并合并成一条汇总发出。
deliveries-none = 还没有通道消息。
deliveries-queued = 入队时间
deliveries-channel = 通道
deliveries-answer = 平台应答
deliveries-held = 因频率限制暂缓，{ $at } 发送
deliveries-next-try = 下次尝试 { $at }
deliveries-in-summary = 已合并在汇总 #{ $summary } 中发送
deliveries-resend = 重新发送

## Mail (Notifications)

mail-status-pending = 待发送
mail-status-sent = 已发送
mail-status-written = 已写入文件
mail-status-failed = 失败
mail-heading = 邮件
mail-route = 邮件发送方式：
mail-to = 收件人
mail-test-delivered = 已送达（{ $status }）：{ $answer }
mail-test-not-delivered = 未送达（{ $status }）。服务器回复：{ $answer } 邮件保留在下方的发件箱中。
mail-digest-everyone = 所有接收任务告警的人
mail-digest-and-channels = 以及通道 { $channels }
mail-digest-summary = 每日日报于 { $time } 发送给 { $to }{ $channels }。
mail-viewer-note = 你以只读身份登录：这些设置由管理员修改。
mail-digest-heading = 每日日报
mail-digest-to = 收件人（用逗号分隔；留空则发给所有接收任务告警的人）
mail-digest-channels = 接收日报和趋势告警的通道（名称，用逗号分隔）
mail-digest-time = 发送时间（{ $zone }）
mail-digest-job-before = 发送时间就是
mail-digest-job = mail-digest 任务
mail-digest-job-after = 的调度；它的重试和历史记录也在那里。
mail-test-heading = 发送测试邮件
mail-test-send = 发送测试邮件
mail-routes-heading = 各任务的告警
mail-routes-explained = 任务第一次运行失败时给收件人发邮件；连续失败达到设定次数后发送一次升级告警；之后第一次成功时发送恢复通知。在任务编辑页中修改。
mail-routes-to = 告警收件人
mail-routes-after = 升级条件
mail-routes-escalate-to = 升级收件人
mail-routes-escalate-channels = 升级通道
mail-routes-failed-runs = 连续失败 { $count } 次
outbox-heading = 发件箱
outbox-all = 全部
outbox-empty = 这里没有邮件。
outbox-subject = 主题
outbox-answer = 服务器应答 / 最近错误
outbox-preview = 预览
outbox-html-part = HTML 正文

## The retry curve

retry-chart-wait = 重试前等待
retry-chart-cap = 上限
retry-chart-total = 累计等待
retry-chart-retry = 重试
retry-chart-seconds = 秒
retry-chart-seconds-log = 秒（对数刻度）
retry-chart-jitter-floor = 抖动下限
retry-chart-jitter-range = 抖动范围

## Settings

settings-maintenance-note = ：立即或在计划的时间窗口内暂停全部任务（或某个标签的任务），以及恢复。
settings-users = 用户
settings-viewer-note = 你以只读身份登录：可以查看所有内容，修改由管理员进行。
settings-audit-note = 谁创建、修改、删除、重新触发、处理或丢弃了什么：
settings-mail-note = 邮件发送方式、日报的收件人和时间、测试邮件和发件箱：
secrets-heading = 密钥
secrets-explained = 任务在 URL、请求头、请求体、参数中以 { $reference } 引用密钥。密钥值加密保存，只在尝试运行时填入，之后不再显示——这里不显示，运行输出中也不显示。
secrets-none = 还没有密钥。
secrets-set-at = 设置时间
secrets-value = 值
secrets-set = 设置密钥
secrets-set-done = 密钥已设置。
secrets-replaced = 密钥已替换。
nodes-explained = 每个运行中的实例每 { $heartbeat } 秒发送一次心跳；超过 { $lost } 秒没有心跳即视为失联，其运行在租约到期后由其他节点接管。
nodes-none = 还没有节点注册。
nodes-heartbeat = 最近心跳
nodes-clock = 时钟
nodes-host = 主机 / 地址
nodes-version = 版本
nodes-host-pid = { $host } 进程 { $pid } · { $addr }
nodes-skew-ahead = 时钟比数据库快 { $seconds } 秒：已校正（Bulwark 以数据库时间为准），但请用 NTP 修正
nodes-skew-behind = 时钟比数据库慢 { $seconds } 秒：已校正（Bulwark 以数据库时间为准），但请用 NTP 修正
nodes-skew-jump = ；偏差这么大的时钟在修正时可能跳变：运行可能在仍在执行时被接管（有防护，但会运行两次）
node-state-live = 在线
node-state-lost = 失联
node-state-stopped = 已停止
users-last-sign-in = 最近登录
users-change = 修改
users-change-one = 修改 { $name }
users-make-viewer = 设为只读
users-make-admin = 设为管理员
users-sign-out-everywhere = 退出所有会话
users-apply = 应用
users-tokens-all = 停用或删除此账户会停用其令牌：{ $names }。
users-tokens-demote = 改为只读用户会停用：{ $names }。
users-done = 已完成。
users-nothing = 没有需要修改的。
users-reset-heading = 重置密码
users-temporary-password = 临时密码
users-reset = 重置
users-reset-done = 密码已设置；对方下次登录时需改成自己的密码，其所有会话已结束。
users-added = 已添加 { $name }（{ $role }）。
users-add-heading = 添加用户
users-add = 添加用户
account-state-active = 正常
account-state-disabled = 已停用
account-state-must-change = 需修改密码

## Traffic: sites

sites-title = 站点
sites-back = ← 流量
sites-open = 尚未登记站点：任何嵌入了统计代码的站点都能上报页面浏览。登记你的站点后只统计它们（其他主机的上报将被拒绝）。
sites-closed = 只有下列站点可以上报；其他主机的上报会被拒绝。
sites-console-users = 已登录本控制台的人永远不会被统计：无论是控制台自身的页面，还是他们从自己的地址访问你的站点。
sites-register-heading = 登记站点
sites-host = 主机名
sites-register = 登记
sites-this-console = { $host }（本控制台）
sites-excluded-none = 无
sites-console-counted = 控制台自身的页面无需统计代码即会被统计。
sites-embed = 嵌入到每个页面（放在 </body> 之前）：
sites-pixel = 不支持 JavaScript 的页面：
sites-not-counted = 不统计的地址：
sites-excluded-label = 不统计的地址（每行一个：203.0.113.7、10.0.0.0/8）
sites-excluded-save = 保存排除列表
sites-remove = 删除此站点（已统计的页面浏览会保留）

## Traffic, shared

bot-category-search = 搜索引擎
bot-category-ai = AI
bot-category-social = 社交
bot-category-seo = SEO
bot-category-archive = 存档
bot-category-monitoring = 监控
bot-category-tool = 工具
bot-category-other = 其他
traffic-range = 时间范围
traffic-range-7d = 最近 7 天
traffic-range-today = 今天
traffic-range-yesterday = 昨天
traffic-range-30d = 最近 30 天
traffic-range-90d = 最近 90 天
traffic-visitors = 访客
traffic-everyone = 全部
traffic-people = 真人
traffic-bots = 爬虫
traffic-bot-category = 爬虫类别
traffic-bot-source = 爬虫来源
traffic-site = 站点
traffic-all-sites = 全部站点

## Traffic: stored hits

hits-title = 原始访问记录
hits-path = 路径包含
hits-ip = IP
hits-sort = 排序
hits-sort-newest = 最新在前
hits-sort-count = 次数最多在前
hits-export = 将这些记录导出为 CSV
hits-none = 没有符合条件的访问记录。
hits-next = 下一页 →
hits-minute = 分钟（UTC）
hits-col-path = 路径
hits-method = 方法
hits-user-agent = User-Agent
hits-referer = 来源页
hits-locale = 语言
hits-bot = 爬虫
hits-count = 次数
hits-person = 真人

## Traffic dashboard

traffic-preset-today = 今天
traffic-preset-yesterday = 昨天
traffic-preset-7d = 最近 7 天
traffic-preset-30d = 最近 30 天
traffic-preset-90d = 最近 90 天
traffic-people-title = 真人
traffic-bots-title = 爬虫
traffic-everyone-title = 全部
traffic-bot-hits = 爬虫访问
traffic-change-new = 本期新增
traffic-change = 较上一周期 { $pct }%（{ $before }）
traffic-over-time = 访问趋势
traffic-by-category = 爬虫类别分布
traffic-by-source = 爬虫来源分布
traffic-series-text = 真人页面浏览 { $people } 次，爬虫 { $bots } 次；最忙的时刻是 { $peak } UTC，共 { $peak_hits } 次。
traffic-no-views = 这个时间范围内没有页面浏览。
traffic-no-bots = 这个时间范围内没有爬虫访问。
traffic-live = 最近一小时（实时）
traffic-live-text = 最近一小时共 { $total } 次访问（真人 { $human }，爬虫 { $bot }）；其中 { $unflushed } 次还在本服务器内存中，尚未写入。
traffic-category-chip = 类别：
traffic-source-chip = 来源：
traffic-all-categories = 全部类别
traffic-all-sources = 全部来源
traffic-to = 至
traffic-show = 查看
traffic-page-views = 页面浏览
traffic-visits = 访问次数
traffic-unique-ips = 独立 IP
traffic-unique-pages = 独立页面
traffic-range-shown = { $from } 至 { $to }（{ $zone }）
traffic-generated = 其中 { $count } 次页面浏览是生成的演示数据。用 { $command } 删除。
traffic-all-sites-title = 全部站点
traffic-open = 任何嵌入 collect.js 的站点都能在这里上报页面浏览：尚未登记站点。登记你的站点后只统计它们。
traffic-register-sites = 登记站点
traffic-closed = 只有已登记的站点可以上报。
traffic-sites-link = 站点及统计代码
traffic-direct = （直接访问）
traffic-referrers = 来源
traffic-landing = 着陆页
traffic-browsers = 浏览器
traffic-systems = 操作系统
traffic-devices = 设备
traffic-people-explained = 真人的页面浏览；来源和着陆页按到达次数统计（从别处进入或直接输入地址的第一个页面）。
traffic-none-in-range = 这个时间范围内没有数据。
traffic-bot-categories = 爬虫类别
traffic-bot-sources = 爬虫来源
traffic-top-pages = 热门页面
traffic-top-pages-explained = 点击页面可查看其原始访问记录；
traffic-all-hits = 全部原始访问记录
traffic-page = 页面
traffic-hits = 访问

## Retry policy warnings (the numbers are the policy's own)

retry-warning-near-fixed = 倍数 { $m } 接近固定间隔：大量失败任务的重试会挤在一起，而不是逐步退避（低于 { $below }）
retry-warning-explosive = 倍数 { $m } 会让间隔急剧膨胀：第 { $retry } 次重试要等待 { $wait }（高于 { $above }）
retry-warning-untunable = 第 { $after } 次重试之后，倍数稍有变化，等待时间就会大幅摆动：{ $detail }
retry-warning-untunable-swing = 在第 { $retry } 次重试，M 每增加 0.1，等待时间变化 { $swing }
retry-warning-untunable-capped = 全靠上限，第 { $retry } 次重试才没有随 M 每增加 0.1 而变化 { $swing }
retry-warning-steep-total = 超过 { $after } 次重试：总等待时间急剧增长，累计达 { $total }
retry-warning-overruns = 重试会跨过下一次定时运行：从第 { $retry } 次重试起，累计等待超过了调度周期（{ $period }）
retry-warning-tolerance = 从第 { $retry } 次重试起，累计等待超过了你能容忍的 { $tolerance }

## The retry editor

jitter-none = 无
jitter-full = 完全抖动
jitter-equal = 均等抖动
jitter-decorrelated = 去相关抖动
retry-preset-fast = 快速任务
retry-preset-fast-long = 快速任务：1 秒，×2，重试 5 次，完全抖动，上限 30 秒——一分钟内结束
retry-preset-important = 重要任务
retry-preset-important-long = 重要任务：30 秒，×2，重试 8 次，均等抖动，上限 1 小时——持续尝试数小时
retry-preset-realtime = 实时回调
retry-preset-realtime-long = 实时回调：200 毫秒，×2，最多重试 2 次，无抖动
retry-preset-standard = 标准指数退避
retry-preset-standard-long = 标准指数退避：10 秒，×2，重试 5 次，完全抖动，上限 10 分钟
retry-presets = 预设
retry-first = 首次间隔 F
retry-first-slider = 首次间隔滑块
retry-multiplier = 倍数 M
retry-multiplier-slider = 倍数滑块
retry-max = 最大重试次数 C
retry-max-slider = 最大重试次数滑块
retry-jitter = 抖动
retry-cap = 单次间隔上限
retry-cap-none = 无
retry-tolerance = 你能容忍的总等待时间
retry-tolerance-example = 例如 1h（不保存）
retry-tolerance-error = 容忍时间{ $error }
retry-success-chance = 单次尝试成功的概率：{ $pct }%
retry-fix-fields = 修正标出的字段后即可看到曲线。
retry-total-wait = 总等待
retry-recovered-within = { $count } 次重试内恢复
retry-dm = 第 { $retry } 次重试的 ∂d/∂M
retry-dn = 第 { $retry } 次重试的 ∂d/∂n
retry-per-m = M 每增加 0.1 变化 { $wait }
retry-per-retry = 每多一次重试 { $wait }
retry-one = 第 { $retry } 次重试
retry-range = 第 { $first }–{ $last } 次重试
retry-times-caption = 如果首次尝试现在失败（{ $zone }）：
retry-times-jitter = （等待时间为名义值；范围是抖动可能取到的值）
retry-col-retry = 重试
retry-col-waits = 等待
retry-col-after = 距首次失败
retry-col-at = 预计开始
retry-col-recovered = 届时恢复概率

## The job editor

job-overlap = 运行仍在进行时到来的触发
job-alert-channels = 告警同时发送到通道
job-command-args = 参数（每行一个）
job-http-body = 请求体
job-cron = Cron（秒 分 时 日 月 周）
job-description = 描述
job-escalate-after = 升级条件（连续失败次数）
job-escalate-channels = 升级告警发送到通道（不勾选则使用告警通道）
job-transient-codes = 表示“稍后重试”的退出码
job-timeout-factor = 系数
job-fallback = 兜底任务
job-timeout-floor = 下限
job-timeout-cap = 硬上限
job-http-headers = 请求头（每行一个“名称: 值”）
job-dependants = 依赖此任务的任务（此任务失败期间，它们的下次运行会被暂缓）
job-alert-to = 失败时发邮件给
job-timeout-mode = 模式
job-builtin-params = 参数（每行一个 key=value）
job-parameters = 运行时接受的参数，每行一个：name: type [= default] [required]，其后可用 | 加选项：choices: a, b | pattern: ^…$ | max_length: N | min: N | max: N。HTTP 任务在 URL 路径或查询参数、请求头的值或请求体中读取 {"$"}{"{"}param:name{"}"}，并按位置编码；命令通过环境变量 BULWARK_PARAM_NAME 和标准输入的 JSON 获取，只有声明了可选值或模式时才可把 {"$"}{"{"}param:name{"}"} 作为完整参数
job-command-program = 程序
job-timeout-stall = 停滞超时（这么久没有输出即结束该次尝试；留空表示不限）
job-timeout-static = 固定超时（样本不足时也使用它）
job-http-expected = 表示成功的状态码
job-tags = 标签（用逗号分隔：所属的服务或团队）
job-exhausted-then = 然后
job-misfire = Bulwark 停机期间错过的触发
job-timeout-window = 窗口（最近成功的运行数）
job-kind-http-call = HTTP 请求
job-kind-command-long = 命令
job-kind-builtin-long = 内置任务
job-overlap-skip = 跳过（并记录）
job-overlap-queue = 排队等待
job-misfire-run-once = 恢复后补跑一次
job-misfire-skip = 跳过（并记录）
job-timeout-mode-static = 固定
job-timeout-mode-p95 = 自适应：近期成功运行的 P95
job-timeout-mode-p99 = 自适应：近期成功运行的 P99
job-exhausted-dead = 放入失败队列（死信）
job-exhausted-skip = 跳到下一次触发（并记录）
job-exhausted-fallback = 触发兜底任务
job-title = 任务 { $name }
job-not-saved-fields = 未保存：有 { $count } 个字段需要修改——{ $fields }
job-not-saved = 未保存：{ $error }
job-read-only = 你是只读用户：这个任务定义不能修改。
job-basics = 基本信息
job-what-runs = 执行内容
job-builtin-task = 任务
job-timezone = 时区
job-next-fires = 接下来五次触发时间：
job-zone-unreadable = 服务器发来的 { $zone } 时区表无法读取，请刷新页面。
job-retry-policy = 重试策略
job-timeout-heading = 每次尝试的超时
job-exhausted-heading = 重试用尽之后
job-alerts = 告警
job-saving = 正在保存…
job-save = 保存任务
job-timeout-from-static = 固定设置
job-timeout-from-static-until = 固定设置，直到有足够的成功运行可供学习（目前 { $samples } / { $needed }）
job-timeout-from-learned = 最近 { $samples } 次成功运行的 { $percentile }（{ $raw }）× 系数，限制在下限和硬上限之间
job-timeout-next = 下次尝试的超时：{ $timeout }——依据{ $source }。
job-no-channels = 还没有通道：请在以下页面添加
job-param = { $name }（{ $kind }）
job-param-required = { $name }（{ $kind }，必填）
job-start-run = 开始运行
hook-heading = 触发 URL
hook-explained = 供无法保存 API 令牌的系统使用：向该 URL 发送 POST 即启动一次运行，参数取自 JSON 请求体 {"{"}"params": {"{"}…{"}"}{"}"}，Idempotency-Key 请求头与 API 中的用法相同。任何拿到 URL 的人都能启动运行：泄露后请轮换。设置密钥后，调用方按 Standard Webhooks 的方式签名：webhook-id、webhook-timestamp（5 分钟内）和 webhook-signature: v1,<对 id.timestamp.body 的 base64 HMAC-SHA256>。
hook-on-console = （本控制台地址）
hook-none = 没有触发 URL。
hook-created = 新的触发 URL。请立即复制：系统只保存它的哈希，不会再次显示。
hook-exists = 此任务已有触发 URL（只在创建时显示一次；新建会替换它）。
hook-new = 生成新的触发 URL
hook-remove = 删除触发 URL
hook-when-paused = 任务暂停期间
hook-when-paused-refuse = 拒绝（409）：由调用方稍后重试
hook-when-paused-queue = 排队：运行等到暂停结束再执行
hook-when-paused-save = 保存
hook-when-paused-saved = 已保存：触发 URL 不变。

## Alert mails (subjects keep the [Bulwark] tag mail filters rely on)

mail-queue-text = 它已进入失败队列，可在那里重新触发：{ $link }
mail-queue-html = 它已进入失败队列：
mail-queue-html-link = 在那里重新触发。
mail-queue-next = 它的状态是“{ $status }”；下一次定时运行会再次尝试。
mail-no-message = （无消息）
mail-failed-at = { $when }，共尝试 { $attempts } 次
mail-fact-job = 任务
mail-fact-run = 运行
mail-fact-failed = 失败时间
mail-fact-error = 错误
mail-fact-message = 消息
mail-first-failure-subject = [Bulwark] { $job } 运行失败：{ $class }
mail-first-failure-text = { $job } 运行失败。
mail-first-failure-again = 如果它持续失败，或者恢复了，你会再收到通知。
mail-escalation-subject = [Bulwark] 升级告警：{ $job } 连续 { $count } 次运行失败
mail-escalation-text = { $job } 自 { $since } 起已连续 { $count } 次运行失败。最近一次：
mail-recovered-subject = [Bulwark] { $job } 已恢复
mail-recovered-text = { $job } 在 { $count } 次失败后再次成功（运行 #{ $run }）。
mail-recovered-down = 故障持续了 { $down }。
mail-test-subject = [Bulwark] 测试邮件
mail-test-text = { $by } 从 Bulwark（{ $console }）发送了这封邮件，用来确认邮件能够送达。

## Chat and webhook messages

chat-first-failure = { $job } 运行失败：{ $class }
chat-escalation = 升级告警：{ $job } 连续 { $count } 次运行失败
chat-recovered = { $job } 已恢复
chat-test = Bulwark 测试消息
chat-attempts = 尝试次数
chat-failing-since = 失败开始于
chat-failed-in-a-row = 连续失败
chat-now = 当前
chat-in-queue = 已进入失败队列
chat-down-for = 故障时长
chat-failed-runs = 失败次数
chat-sent = 发送时间
chat-open-run = 查看运行
chat-full-digest = 完整日报
chat-every-message = 全部消息
chat-recent-failures = 最近的失败
chat-open-bulwark = 打开 Bulwark
mail-locale = 邮件语言（告警、日报、趋势）
mail-locale-default = 配置的默认语言（{ $name }）
channels-locale = 消息语言
channels-locale-default = 配置的默认语言

## Policies in words (a run's page)

policy-retry = { $first } × { $m }，{ $retries }，{ $jitter }，{ $cap }
policy-retries = 最多重试 { $count } 次
policy-no-jitter = 无抖动
policy-jitter = { $jitter }
policy-no-cap = 无上限
policy-cap = 上限 { $cap }
policy-timeout = 超时 { $timeout }
policy-timeout-learned = 自适应超时：最近 { $window } 次成功运行的 { $percentile } × { $factor }，介于 { $floor } 与 { $cap } 之间（样本不足时为 { $initial }）
policy-stall = ，或 { $stall } 无输出
policy-snapshot = { $retry }；{ $timeout }

## Refusals (English mirrors the errors' own messages)

error-duration-empty = 不能为空；请填写时长，例如 500ms、10s、5m 或 1h
error-duration-unit = “{ $text }”缺少单位：ms、s、m 或 h（例如 10s）
error-duration-malformed = “{ $text }”不是时长；请写成 500ms、10s、5m 或 1h30m 这样的形式
error-duration-fine = “{ $text }”精确到了毫秒以下
error-duration-long = “{ $text }”太长（最多 30 天）
error-retry-first = 首次间隔{ $error }
error-retry-first-zero = 首次间隔必须大于 0
error-retry-multiplier-nan = 倍数“{ $text }”不是数字；必须在 1.0 到 8.0 之间
error-retry-multiplier-range = 倍数必须在 1.0 到 8.0 之间，而不是 { $m }
error-retry-multiplier-precision = 倍数“{ $text }”的小数超过一位；请在 1.0 到 8.0 之间以 0.1 为步长取值
error-retry-max = 最大重试次数必须是 1 到 16 之间的整数，而不是 { $text }
error-retry-jitter = 抖动必须是 none、full、equal 或 decorrelated，而不是“{ $text }”
error-retry-cap = 上限{ $error }
error-retry-cap-below-first = 上限（{ $cap }）不能小于首次间隔（{ $first }）
error-cron-empty = 必须填写 Cron 表达式，例如 0 30 7 * * *（每天 07:30:00）
error-cron-fields = Cron 需要 6 个字段，秒在最前（秒 分 时 日 月 周）；现在是 { $count } 个：例如 0 30 7 * * * 表示每天 07:30:00
error-cron-invalid = Cron 表达式无效：{ $detail }
error-cron-never = 这个 Cron 表达式永远不会触发
error-cron-zone = 未知时区“{ $zone }”；请使用 IANA 名称，例如 UTC、Europe/Berlin 或 Asia/Shanghai
error-username-empty = 请填写用户名
error-username-long = 用户名最多 64 个字符
error-username-chars = 用户名只能包含小写字母、数字以及 '.'、'_'、'-'
error-role = 角色只能是 admin（管理员）或 viewer（只读），不能是 “{ $text }”
error-password-empty = 请填写密码
error-password-short = 密码至少 8 个字符
error-password-long = 密码最多 1024 个字符
error-username-taken = 用户名 “{ $name }” 已存在
error-login-bad = 用户名不存在或密码错误
error-login-throttled = 登录失败次数过多，请 { $minutes } 分钟后再试
error-busy = 服务器正忙于校验其他登录，请稍后再试
error-last-admin = “{ $name }” 是最后一个启用的管理员；请先设置另一位管理员
error-wrong-password = 当前密码不正确
error-same-password = 新密码不能与当前密码相同
error-sign-in = 请先登录
error-forbidden = 只有管理员可以执行此操作
error-fields = 有 { $count } 个字段需要修改
error-not-found = 找不到{ $what }
error-password-change-required = 请先在“账号”页面设置新密码
error-internal = 服务器未能完成此请求，原因已记录在服务器日志中
error-request-failed = 请求失败：{ $detail }
noun-job = 任务 { $id }
noun-run = 运行 #{ $id }
noun-user = 用户 “{ $name }”
noun-site = 站点 “{ $host }”
noun-mail = 邮件 { $id }
noun-channel = 通道 “{ $name }”
noun-channel-message = 通道消息 { $id }
noun-maintenance-window = 维护窗口 { $id }
noun-token = 令牌 “{ $name }”
noun-secret = 密钥 “{ $name }”
job-error-name-empty = 请填写任务名称
job-error-name-long = 任务名称最多 128 个字符
job-error-name-chars = 任务名称只能包含字母、数字以及 '-'、'_'、'.'
job-error-program = 请填写要执行的程序
job-error-exit-codes = 临时错误退出码是用逗号分隔的整数，例如 75
job-error-param-line = 第 { $line } 行参数应写成 'key=value'
job-error-builtin = 内置任务只能是以下之一：{ $tasks }
job-error-kind = 任务类型只能是 { $kinds }，不能是 “{ $text }”
job-error-overlap = 重叠策略：{ $error }
job-error-misfire = 错过触发策略：{ $error }
job-error-fallback-missing = 请填写兜底任务
job-error-fallback-self = 任务不能把自己作为兜底任务
job-error-exhausted = 重试用尽后的处理：{ $error }
job-error-depends-self = 任务不能依赖自己
job-error-param-undeclared = 使用了 { "$" }{ "{" }param:{ $name }{ "}" }，但没有声明参数 { $name }
job-error-param-url-origin = { "$" }{ "{" }param:{ $name }{ "}" } 不能出现在 URL 的协议、主机或端口中：请放在路径或查询参数里，其值会被百分号编码
job-error-param-header-name = { "$" }{ "{" }param:{ $name }{ "}" } 不能出现在请求头名称中；请求头的值可以包含它
job-error-param-body = { "$" }{ "{" }param:{ $name }{ "}" } 只能放在 JSON、表单或纯文本请求体中，其值会按该格式编码；请把 Content-Type 设为其中之一
job-error-param-program = { "$" }{ "{" }param:{ $name }{ "}" } 不能作为程序：命令可从 { $variable } 或标准输入读取该值
job-error-param-part-of-argument = { "$" }{ "{" }param:{ $name }{ "}" } 不能作为参数的一部分：请从 { $variable } 或标准输入读取该值，或让整个参数就是 { "$" }{ "{" }param:{ $name }{ "}" } 并声明其可选值或模式
job-error-param-open-argument = 只有取值为白名单的参数才能作为命令参数：请为 { $name } 声明可选值或锚定的模式（数字：最小值不小于 0），或从 { $variable } 读取该值
job-error-not-held = { $name } 没有在不允许的位置使用参数：无需确认
job-error-no-such-job = 没有名为“{ $name }”的任务
job-error-name-taken = 名为“{ $name }”的任务已存在
job-error-channel-missing = 没有名为“{ $name }”的通道（请在通知页面或用 bulwark channel add 添加）
job-error-tags-full = { $name } 已有 { $max } 个标签，这是一个任务的上限
job-error-held-resume = { $name } 因在不再允许的位置使用参数而被暂挂：请编辑它，或确认按原样运行
job-held-banner = 升级后暂挂：此任务在不再允许的位置使用了参数，因此被暂停，而不是每次触发都失败。
job-held-confirm = 按原样运行，直到下次编辑
job-held-confirmed = 经管理员确认按原样运行，直到下次编辑：
job-error-escalate-after = 升级告警的阈值必须是 1 到 100 之间的整数（连续失败的运行次数），不能是 “{ $text }”
job-error-method = 请求方法只能是 { $methods }
job-error-url = URL 必须以 http:// 或 https:// 开头，且不能包含空格
job-error-header-line = 第 { $line } 行请求头应写成 'Name: value'
job-error-statuses = 期望的状态码是 100 到 599 之间的状态码或范围，例如 200-299, 304
job-error-redirects = 跟随重定向只能是 { $choices } 之一，不能是“{ $text }”
job-http-redirects = 跟随重定向
job-redirects-same-origin = 仅限同源
job-redirects-any = 任意（请求头一并发送）
job-redirects-none = 从不
job-error-positive = { $label }必须大于 0
job-error-duration = { $label }{ $error }
job-error-timeout-mode = 超时模式：{ $error }
job-error-window = 统计窗口必须是 5 到 1000 之间的整数（运行次数），不能是 “{ $text }”
job-error-factor = 系数必须在 1.0 到 8.0 之间，步长 0.1，不能是 “{ $text }”
job-error-floor-cap = 下限不能高于硬上限
job-error-static-cap = 固定超时不能高于硬上限
job-label-timeout = 超时
job-label-floor = 下限
job-label-hard-cap = 硬上限
job-label-stall = 无输出超时
job-label-value = 数值
digest-title = Bulwark 日报 { $day }
digest-succeeded = （成功率 { $rate }）
digest-failed = 失败
digest-in-queue = 失败队列中
digest-failing-job = { $job }（{ $runs } 次中失败 { $failed } 次）
digest-failing-most = 失败最多
digest-subject = [Bulwark] 日报 { $day }：运行 { $runs } 次，失败 { $failed } 次，失败队列中 { $queue } 个
digest-waiting = 已等待 { $wait }
digest-hour-counts = 成功 { $ok }，失败 { $failed }
digest-health = Bulwark 运行状况，{ $from } 至 { $to }（{ $zone }）
digest-col-job = 任务
digest-col-runs = 运行次数
digest-col-success = 成功率
digest-col-p95 = P95
digest-col-trend = 趋势
digest-col-timeouts = 超时
digest-col-retries = 重试
digest-col-slow = 慢
digest-col-tag = 标签
digest-col-jobs = 任务数
digest-no-tag = （无标签）
digest-by-tag = 按标签
digest-unit-jobs = 个任务
digest-unit-runs = 次运行
digest-queue-heading = 失败队列：{ $count } 个运行
digest-per-hour-text = 每小时运行（# 成功，x 失败）
digest-per-hour = 每小时运行
digest-console = 控制台：{ $url }
digest-open-queue = 打开失败队列
trend-spike-title = 5 分钟内 { $recent } 次尝试失败
trend-rate-title = { $percent } 的尝试失败
trend-burst-title = { $class } 错误集中爆发
trend-spike-detail = 最近 5 分钟有 { $recent } 次尝试失败；此前 24 小时平均每 5 分钟 { $usual } 次。
trend-rate-detail = 最近 15 分钟 { $attempts } 次尝试中有 { $failed } 次失败（{ $percent }），超过 { $limit } 的上限。
trend-burst-detail = 最近 5 分钟的 { $recent } 次失败中有 { $count } 次是 { $class } 错误；此前 24 小时平均每 5 分钟 { $usual } 次。
trend-headline = 趋势：{ $title }
trend-what = 情况
trend-subject = [Bulwark] 趋势：{ $title }
trend-recent-failures = 最近的失败
trend-failed-queue = 失败队列
trend-quiet = 在情况持续好转一段时间之前，不会再就此发送通知。
error-secret-name-empty = 请填写密钥名称
error-secret-name-long = 密钥名称最多 { $max } 个字符
error-secret-name-chars = “{ $name }”不是合法的密钥名称：只能使用字母、数字以及 _、-、.
error-secret-empty = 密钥的值不能为空
error-tag-empty = 标签不能为空
error-tag-long = 标签“{ $tag }”超过了 { $max } 个字符
error-tag-chars = 标签“{ $tag }”只能包含小写字母 a–z、数字以及 '-'、'_'、'.'，且必须以字母或数字开头
error-tags-too-many = 一个任务最多 { $max } 个标签，而不是 { $count } 个
error-pause-reason-empty = 请说明暂停 Bulwark 的原因（横幅会向所有人显示）
error-pause-reason-long = 原因超过了 { $max } 个字符
error-time-empty = 时间不能为空；请填写例如 2h、30m 或 2026-12-24 17:00（UTC）
error-time-malformed = “{ $text }”不是时间；请填写从现在起的时长（2h、30m）或 UTC 时间（2026-12-24 17:00）
error-window-end-passed = 结束时间已经过去
error-window-end-before-start = 结束时间必须晚于开始时间
error-already-paused = Bulwark 已处于暂停状态：{ $reason }；如需修改原因或结束时间，请先恢复
error-site-empty = 站点以主机名命名，例如 shop.example.com
error-site-host = “{ $text }”不是主机名，应类似 shop.example.com
error-site-host-long = 主机名最多 { $max } 个字符
error-site-console = { $host } 是控制台自己的主机（public_url）：无需登记即会统计
error-channel-name = “{ $name }”不是合法的通道名称：最多 64 个字符，只能使用字母、数字以及 _、-、.
error-channel-kind = 请选择通道类型
error-channel-to = 邮件通道至少需要一个收件地址（--to）
error-channel-url-missing = 此类通道需要填写 URL（--url，或用 --url - 从标准输入读取）
error-channel-url = URL 必须以 https://（或 http://）开头，并包含主机名
error-channel-secret = Webhook 签名密钥的格式为 whsec_<base64>，与 Standard Webhooks 库的约定一致
error-hook-when-paused = “{ $text }”：请选择 refuse 或 queue
error-channel-taken = 名为“{ $name }”的通道已存在
error-channel-in-use = 通道“{ $name }”正在被{ $by }使用：请先在那里移除
error-channel-missing = 没有名为“{ $name }”的通道
error-digest-job-missing = 缺少 { $job } 任务：它会在服务器启动时创建
error-token-name-empty = 请为令牌命名（说明用途：deploy-pipeline、prometheus…）
error-token-name-long = 令牌名称最多 64 个字符
error-token-name-chars = “{ $name }”不是合法的令牌名称：只能使用字母、数字以及 _、-、.
error-token-expiry = “{ $text }”不是有效期：请填写 30d、12h、8w、日期（例如 2027-06-30）或 never
error-token-date-passed = { $text } 已经过去：令牌的过期时间必须在将来
error-token-too-long = 令牌的有效期不能超过五年（或设为永不过期）
error-token-past = 令牌的过期时间必须在将来
error-token-taken = 名为“{ $name }”的令牌已存在：请先吊销它，或换一个名称
error-token-tags-scope = 只有 trigger 令牌可以限定标签：read 或 admin 令牌适用于所有任务
error-token-scope = 范围只能是 { $scopes } 之一
error-token-owner-missing = 没有名为“{ $name }”的账户可以拥有此令牌
error-token-owner-disabled = { $name } 已停用：停用的账户不能拥有令牌
error-token-owner-role = { $name } 是只读用户：{ $scope } 令牌的所有者必须是管理员
error-time-of-day = “{ $text }”不是一天中的时刻，应类似 08:00
error-email = “{ $text }”不是电子邮件地址
error-test-mail-to = 请填写测试邮件的收件地址
error-release-rate = 放行速率必须在每分钟 1 到 6000 个运行之间
error-select-run = 请至少选择一个运行
error-select-job = 请至少选择一个任务
error-say-why = 请说明原因，以便记入审计日志
error-not-in-queue = 运行 #{ $id } 不在失败队列中（它不是死信状态，或已被他人处理）
error-not-held = 运行 #{ $id } 没有被挂起（它没有被阻塞）
error-params-json = 不是由参数值组成的 JSON 对象：{ $error }
error-name-session = 请指定一个会话，或选择全部会话
error-param-number = “{ $text }”不是数字
error-param-bool = “{ $text }”不是 true 或 false
error-param-line = 第 { $line } 行：参数应写成 'name: type [= default] [required] [| option: value]'
error-param-name = 第 { $line } 行：“{ $name }”不是合法的参数名：只能使用字母、数字和 _，且不能以数字开头
error-param-type = 第 { $line } 行：{ $name } 的类型只能是 { $types } 之一
error-param-default = 第 { $line } 行：{ $name } 的默认值：{ $error }
error-param-twice = 第 { $line } 行：{ $name } 重复声明
error-param-too-many = 一个任务最多声明 { $max } 个参数
error-param-none = 此任务没有声明参数
error-param-unknown = 没有名为 { $name } 的参数；此任务接受 { $known }
error-param-kind = { $name } 必须是 { $kind }，不能是 { $value }
error-param-long = { $name } 超过了 { $max } 字节
error-param-required = 请填写 { $name }
error-param-option = 第 { $line } 行：“{ $text }”不是选项；选项有 'choices: a, b'、'pattern: ^…$'、'max_length: N'、'min: N' 和 'max: N'，每个写在 ' | ' 之后
error-param-option-kind = 第 { $line } 行：{ $option } 不适用于 { $kind } 类型的参数
error-param-option-number = 第 { $line } 行：{ $option } 必须是数字，不能是“{ $text }”
error-param-choices-empty = 第 { $line } 行：请列出 { $name } 的可选值，以逗号分隔
error-param-pattern = 第 { $line } 行：{ $name } 的模式：{ $error }
error-param-pattern-anchored = 模式必须锚定：以 ^ 开头、以 $ 结尾（最多 { $max } 个字符）
error-param-range = 第 { $line } 行：{ $name } 的最小值大于最大值
error-param-choice = { $name } 只能是 { $choices } 之一，不能是“{ $value }”
error-param-max-length = { $name } 超过了 { $max } 个字符
error-param-pattern-mismatch = { $name } 不符合 { $pattern }
error-param-below = { $name } 不能小于 { $min }
error-param-above = { $name } 不能大于 { $max }
error-param-header-break = { $name } 用于请求头，请求头的值不能包含换行
error-param-dot-segment = { $name } 用于 URL 路径，'.' 和 '..' 会改变路径层级
error-param-origin = 这些参数会把请求发往另一台主机
error-idempotency-reused = 此 Idempotency-Key 之前已随不同的参数发送过：重试请发送相同的参数，新请求请使用新的键
noun-job-named = 任务“{ $name }”
noun-trigger-url = 此触发 URL
error-range-date = “{ $text }”不是日期，应类似 2026-11-30
error-filter-category = 类别：{ $error }
error-filter-sort = “{ $text }”不是排序方式：请用 newest 或 count
error-filter-after = “{ $text }”不是分页游标
error-filter-day = { $field } 必须是类似 2026-11-30 的日期，不能是“{ $text }”
error-filter-reversed = 开始日期（{ $from }）晚于结束日期（{ $to }）
error-filter-class = 错误类别：{ $error }
error-filter-cursor = 分页链接已损坏；请从第一页开始
error-range-preset = “{ $text }”不是时间范围：请使用 today、yesterday、7d、30d、90d，或填写起止日期
error-range-half-open = 自定义范围需要同时填写开始和结束日期
error-range-reversed = 开始日期 { $from } 晚于结束日期 { $to }
error-range-future = 范围的结束日期 { $to } 晚于今天（{ $today }）
error-range-retention = 流量数据保留 { $days } 天：范围必须从 { $earliest } 或之后开始，不能是 { $from }
error-range-type = “{ $text }”不是访客类型：请使用 all、human 或 bot
chat-summary = 通道达到频率上限期间另有 { $count } 条告警
retry-chart-recovered = 历史故障已恢复
retry-chart-recovered-axis = 恢复比例 %
retry-recovered-past = 本任务历史故障中 { $count } 次重试内恢复
evidence-title = 本任务自身的失败记录
evidence-new-job = 任务运行并失败后，这里会显示某个策略能恢复多少次历史故障。
evidence-too-few = 只有 { $count } 次失败记录，至少需要 { $needed } 次才可参考，因此上面的概率仍是估计值。
evidence-unavailable = 无法读取此任务的失败记录（{ $error }），因此上面的概率仍是估计值。
evidence-basis = 以本任务的 { $episodes } 次失败记录回放（其中 { $censored } 次从未恢复）：每次重试开始时已结束的故障比例。
evidence-col-starts = 开始于
evidence-col-edited = 当前编辑的策略
evidence-col-in-force = 生效中的策略
evidence-idle = 增益不足 1 %
evidence-summary = 恢复 { $recovered }，预期等待 { $wait }
evidence-target = 恢复目标
evidence-suggest = 建议策略
evidence-no-suggestion = 无法给出建议：请先修正字段。
evidence-suggestion = 建议：可恢复 { $recovered } 的历史故障，最多等待 { $wait }。
evidence-unreachable = 没有策略能达到目标：这些故障持续时间超过编辑器允许的任何重试计划。此策略以最少的等待恢复最多。
evidence-outside-ranges = 达到目标需要超出稳妥范围（倍数 1.5–4，重试 3–10 次）。
evidence-already = 字段已是此策略。
evidence-apply = 应用
digest-policies = 值得检查的重试策略（以各任务自身的失败记录回放）：
digest-policy-recovers-few = 在 { $episodes } 次历史故障中只能恢复 { $recovered }
digest-policy-waits-long = 最多等待 { $wait }，但在 { $episodes } 次历史故障中恢复过的最长一次只持续了 { $longest }
