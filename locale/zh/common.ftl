# 布局、导航、通用按钮和词语、语言名称。

product-name = aiplane
product-tagline = LLM 网关
page-title = { $page } · aiplane
skip-to-content = 跳到正文
nav-label = 主导航
nav-menu = 菜单
nav-tokens = 令牌
nav-playground = 试验场
nav-admin = 管理
nav-admin-settings = 设置
nav-admin-groups = 用户组
nav-admin-users = 用户
nav-admin-tokens = 令牌
nav-admin-backends = 后端
nav-admin-queue = 队列
nav-admin-activity = 活动

language-label = 语言
language-name-en = 英语
language-name-de = 德语
language-name-fr = 法语
language-name-es = 西班牙语
language-name-ru = 俄语
language-name-zh = 中文
signed-in-as = 当前用户：{ $username }
sign-out = 退出登录

action-save = 保存
action-cancel = 取消
action-close = 关闭
action-create = 创建
action-delete = 删除
action-dismiss = 隐藏
action-edit = 编辑
column-actions = 操作
status-loading = 正在加载…
status-saving = 正在保存…
status-saved = 已保存。
value-never = 从未
value-none = —
value-yes = 是
value-no = 否
value-on = 开启
value-off = 关闭
value-not-reported = 未报告
duration-seconds = { $seconds } 秒
duration-minutes = { $minutes } 分 { $seconds } 秒
duration-hours = { $hours } 小时 { $minutes } 分
duration-ms = { $ms } 毫秒

priority-label = 优先级
priority-inherit = 继承
priority-inherit-with = 继承（{ $priority }）
priority-low = 低
priority-medium = 中
priority-high = 高

shell-pending = 此页面的控件尚不可用。

forbidden-title = 拒绝访问
forbidden-body = 此页面仅供管理员使用。如需访问，请联系管理员。
not-found-title = 页面不存在
not-found-body = 此地址没有对应的页面。
back-home = 返回您的令牌
