# 管理：设置、用户组、用户、全部令牌。

admin-settings-title = 设置
admin-settings-intro = 运行设置：请求优先级、系统默认优先级，以及请求等待空闲容量的最长时间。
admin-groups-title = 用户组
admin-groups-intro = 网关用户组决定谁可以使用哪些模型、谁管理 aiplane，以及组成员的优先级。
admin-users-title = 用户
admin-users-intro = 可以登录 aiplane 的本地账户。
admin-tokens-title = 全部令牌
admin-tokens-intro = 每个 API 令牌及其所有者和优先级。

admin-section-access = 访问
admin-section-gateway = 网关
setting-priority-enabled = 启用请求优先级
setting-priority-default = 系统默认优先级
setting-upstream-wait = 等待时限（秒）
