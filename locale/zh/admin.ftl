# 管理：设置、用户组、用户、全部令牌。

admin-settings-title = 设置
admin-settings-intro = 运行设置：请求优先级、系统默认优先级，以及请求等待空闲容量的最长时间。
admin-groups-title = 用户组
admin-groups-intro = 网关用户组决定谁管理 aiplane 以及组成员的优先级；他们可以使用哪些模型在每个池上设置（后端 → 池）。
admin-users-title = 用户
admin-users-intro = 可以登录 aiplane 的本地账户。
admin-tokens-title = 全部令牌
admin-tokens-intro = 每个 API 令牌及其所有者和优先级。

## 设置

settings-section-access-gateway = 访问 › 网关
settings-section-access-gateway-intro = 请求优先级，以及在所有后端都繁忙时为请求排序的准入队列。
settings-section-observability = 可观测性
settings-section-observability-intro = 每个请求的活动记录保留多久。
settings-save = 保存设置
settings-save-hint = 所有值一起保存；只要有一个不被允许，就什么都不会改变。
settings-saved = 设置已保存。
setting-default = 默认值：{ $value }。
setting-error = { $setting }：{ $message }
setting-error-range = { $setting }必须是 { $min } 到 { $max } 之间的整数。

setting-gateway-priority-enabled = 启用请求优先级
setting-gateway-priority-enabled-hint = 关闭时，所有请求同属一个类别，队列按到达顺序处理。
setting-gateway-priority-default = 系统默认优先级
setting-gateway-priority-default-hint = 所在用户组均未设置优先级的用户所使用的优先级。
setting-gateway-upstream-wait-secs = 等待时限（秒）
setting-gateway-upstream-wait-secs-hint = 请求在因“容量超时”失败之前，最多可等待空闲后端的时间。设为 0 时仍会尝试一次。
setting-gateway-scheduler = 调度器
setting-gateway-scheduler-hint = 严格：高优先于中，中优先于低，同一类别内按到达顺序。计分：另外考虑等待时长和缓存亲和性。先到先服务：优先级作为领先时间。加权最短提示：短提示优先，并按优先级加权。 最早截止优先：同一类别内，要求等待更短（X-AIplane-Max-Wait）的请求先行。
setting-gateway-scheduler-strict = 严格优先级
setting-gateway-scheduler-serial = 计分（等待时长、亲和性）
setting-gateway-scheduler-fcfs = 先到先服务
setting-gateway-scheduler-wspt = 加权最短提示优先
setting-gateway-scheduler-edf = 最早截止优先
setting-gateway-aging-divisor-secs = 老化除数（秒）
setting-gateway-aging-divisor-secs-hint = 计分调度器：每等待这么长时间，请求得分加一分。设为 0 关闭老化。
setting-gateway-affinity-bonus = 缓存亲和加分
setting-gateway-affinity-bonus-hint = 计分调度器：若请求的缓存预热后端正好有空闲槽位，给它加的分数（0 到 99）。
setting-gateway-max-waiters = 最大等待请求数
setting-gateway-max-waiters-hint = 超过此数量后，新请求会立即以 429 被拒绝。0 表示不限制。
setting-gateway-fair-share = 类别内公平分配
setting-gateway-fair-share-hint = 严格调度器：同一类别内各用户轮流处理，避免某一用户的大量请求挤占其他人的请求。
setting-gateway-fair-share-by = 公平共享的计量方式
setting-gateway-fair-share-by-hint = 请求：每个请求算一轮。令牌：按各人消耗的令牌（提示加两倍输出，以引擎报告为准）来服务，这样一个人的长提示不会挤掉别人的短提示。
setting-gateway-fair-share-by-requests = 请求
setting-gateway-fair-share-by-tokens = 令牌
setting-gateway-fair-share-half-life-secs = 公平共享的遗忘时间（半衰期，秒）
setting-gateway-fair-share-half-life-secs-hint = 按令牌计量时：某人超出他人的用量每隔这么多秒减半。0 表示永不遗忘。
setting-gateway-headroom-secs = 预留余量保持时间（秒）
setting-gateway-headroom-secs-hint = 在此时间内有更高类别的请求到来时，后端的预留余量会为其保留最后几个位置，不给较低类别使用；若近期没有，任何类别都可使用全部位置。
setting-gateway-preemption = 在预填充阶段抢占较低类别
setting-gateway-preemption-hint = 必须等待某个后端的较高类别请求，会中断该后端上一个尚未发送首个事件（引擎仍在读取提示）的较低类别流：被中断的请求回到其类别的队首重新等待，其客户端只会看到更长的等待。每个请求最多被中断一次；完整（非流式）回答从不被中断。
setting-gateway-connect-timeout-secs = 连接超时（秒）
setting-gateway-connect-timeout-secs-hint = 等待模型服务器接受连接的时长，超时后改试其他副本。
setting-gateway-first-byte-timeout-secs = 首字节超时（秒）
setting-gateway-first-byte-timeout-secs-hint = 模型服务器开始响应前允许的时长（长提示词的预填充需要时间，请设得宽裕些）；超时后请求以 504 失败。
setting-gateway-idle-timeout-secs = 分块间空闲超时（秒）
setting-gateway-idle-timeout-secs-hint = 已开始的响应在两个分块之间允许停顿的时长；超时后响应以错误结束并释放槽位。
setting-gateway-media-urls = 引擎可获取的媒体 URL
setting-gateway-media-urls-hint = 引擎会在您的网络内部自行获取请求中的图像、音频和视频 URL。“仅公共”会以 400 拒绝 file: 及其他协议，以及回环、私有、链路本地或云元数据的地址或名称；data: URL 始终放行。主机名不会被解析：请用防火墙限制引擎的出站流量。
setting-gateway-media-urls-public = 仅公共主机和 data: URL
setting-gateway-media-urls-any = 任意 URL（引擎获取调用方发送的内容）
setting-activity-retention-days = 活动记录保留天数
setting-activity-retention-days-hint = 更早的记录每小时删除一次。

## 用户组

groups-caption = 网关用户组
groups-empty = 还没有用户组。
group-new = 新建用户组
group-new-title = 新建用户组
group-edit-title = 编辑用户组“{ $name }”
group-name = 名称
group-name-hint = 字母、数字、点、下划线或短横线。重命名后所有引用都会保留。
group-description = 描述
group-roles = 角色
group-members = 成员
group-members-filter = 筛选用户
group-members-none = 还没有用户。
group-members-everyone = 所有人（默认组）
group-members-nobody = 没有成员
group-priority-hint = 成员继承其所有用户组中最高的优先级。“未设置”表示交由其他用户组或系统默认值决定。
group-priority-none = 未设置
group-priority-of = 用户组 { $name } 的优先级
group-priority-saved = 用户组“{ $name }”的优先级已保存。
group-is-admin = 管理员
group-is-admin-hint = 成员可以管理 aiplane。
group-is-default = 默认组
group-is-default-hint = 所有用户都属于该组，无需逐一列出。
group-badge-admin = 管理员
group-badge-default = 默认
group-actions = 用户组 { $name } 的操作
group-delete-confirm = 删除用户组“{ $name }”？其成员将失去该组授予的权限。
group-deleted = 用户组“{ $name }”已删除。
group-saved = 用户组“{ $name }”已保存。
group-created = 用户组“{ $name }”已创建。

## 用户

users-caption = 本地账户
user-new = 新建用户
user-new-title = 新建用户
user-edit-title = 编辑用户“{ $name }”
user-create = 创建用户
user-username = 用户名
user-username-hint = 仅限字母、数字和 @ . + - _。
user-email = 电子邮件
user-password = 密码
user-password-hint = 没有密码的账户在设置密码之前无法登录。
user-new-password = 新密码
user-new-password-hint = 留空则保留当前密码。
user-active = 已启用
user-active-hint = 停用的账户无法登录，其令牌也会失效。
user-status = 状态
user-groups = 用户组
user-last-login = 上次登录
user-badge-active = 已启用
user-badge-inactive = 已停用
user-badge-admin = 管理员
user-is-you = 这是您
user-actions = 用户 { $name } 的操作
user-delete-confirm = 删除账户“{ $name }”及其所有令牌？
user-deleted = 用户“{ $name }”已删除。
user-saved = 用户“{ $name }”已保存。
user-created = 用户“{ $name }”已创建。

## 全部令牌

admin-tokens-caption = 全部 API 令牌
admin-tokens-empty = 还没有人创建令牌。
admin-tokens-filter = 按令牌或所有者筛选
admin-tokens-count = 显示 { $total } 个令牌中的 { $shown } 个
admin-tokens-priority-disabled = 请求优先级目前已关闭：这些选择要在“设置”中启用后才会生效。
admin-token-name = 令牌
admin-token-owner = 所有者
admin-token-state = 状态
admin-token-effective = 生效值
admin-token-priority-of = { $owner } 的令牌 { $name } 的优先级
admin-token-inherits = 从所有者的用户组继承“{ $priority }”。
admin-token-set-by-admin = 由 { $name }（管理员）设置。
admin-token-set-by-owner = 由 { $name }（所有者）设置。
admin-token-actions = { $owner } 的令牌 { $name } 的操作
admin-token-revoke-confirm = 要吊销 { $owner } 的“{ $name }”吗？使用它的程序将立即停止工作，{ $owner } 会看到是您吊销的。
admin-token-delete-confirm = 要永久删除 { $owner } 的“{ $name }”吗？使用它的程序将立即停止工作。
admin-token-revoked = { $owner } 的令牌“{ $name }”已吊销。
admin-token-deleted = { $owner } 的令牌“{ $name }”已删除。
