# 个人 API 令牌。

tokens-title = API 令牌
tokens-intro = 程序以其中一个令牌作为持有者令牌调用网关。除非您为令牌另选优先级，否则它将继承您的优先级。
tokens-empty = 您还没有令牌。
tokens-create = 创建令牌
tokens-list-label = 您的令牌
tokens-owner-priority = 您继承的优先级：{ $priority }
tokens-max-priority = 您可选择的最高优先级：{ $priority }
tokens-priority-disabled = 请求优先级功能目前已关闭。管理员启用后，您的选择即会生效。

token-prefix = 开头为
token-created = 创建时间
token-last-used = 最近使用
token-expires = 到期时间
token-status-active = 有效
token-status-revoked = 已吊销
token-status-expired = 已过期
token-priority-saved = 优先级已保存。
token-actions = { $name } 的操作
token-revoke = 吊销
token-rotate = 轮换
token-delete = 删除
token-revoke-confirm = 要吊销“{ $name }”吗？使用它的程序将立即停止工作。
token-rotate-confirm = 要轮换“{ $name }”吗？当前密钥将失效，新密钥只显示一次。
token-delete-confirm = 要永久删除“{ $name }”吗？
token-revoked = 令牌“{ $name }”已吊销。
token-deleted = 令牌“{ $name }”已删除。
token-revoked-by = 已由 { $name } 于 { $date } 吊销。
token-revoked-on = 已于 { $date } 吊销。

create-title = 创建令牌
create-name = 名称
create-name-hint = 例如将使用它的程序或机器。
create-priority-hint = “继承”跟随您所在的用户组。后台任务请选择较低的优先级。
create-submit = 创建令牌

secret-title = 请立即复制您的令牌
secret-once = 令牌只会显示这一次。请妥善保存。
secret-label = 新令牌
secret-copy = 复制
secret-copied = 已复制到剪贴板。
secret-copy-failed = 复制失败。请选中令牌并手动复制。
secret-done = 完成
