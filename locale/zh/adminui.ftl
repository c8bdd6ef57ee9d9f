# 管理：队列、后端、池、用户和组页面的细节修补，密码，重命名。

queue-order-intro = 每一组是一组后端，组内请求共享这些后端的槽位；第一行将获得下一个空闲槽位。先由优先级类别决定，再按调度器的顺序：分数（serial 调度器）、提示和已等待时间。
queue-position = 位次
queue-position-value = 第 { $position } 位
queue-score = 分数
queue-waits-for = 等待后端
queue-line-heading = { $backends }：{ $count } 个请求正在等待

backend-no-pool = 不在任何池中：在有池包含此后端之前，没人能调用它的模型（返回 404）。
backend-saved-no-pool = 后端“{ $name }”已保存，但它不在任何池中：在有池包含它之前，它的模型返回 404。
backend-detect-failed = { $name } 的探测失败：原因见其卡片。
backend-detect-failed-unreachable = 探测失败：{ $url } 没有应答（{ $error }）。
backend-detect-failed-status = 探测失败：{ $url } 返回了 { $status }（{ $error }）。
backend-detect-failed-not-models = 探测失败：{ $url } 有应答，但不是模型列表（{ $error }）。
backend-part-pools = 池
backend-pools-hint = 此后端所服务的池；每个池决定谁可以调用它的模型。
backend-pools-none = 还没有任何池：请先在“池”下创建一个，再把此后端加入其中。

pool-access = 谁可以使用
pool-access-everyone = 所有人
pool-access-everyone-hint = 每个人和每个令牌，无论属于哪些组。
pool-access-groups = 仅这些组的成员
pool-access-nobody = 未勾选任何组：没有人可以使用此池。
pool-groups-nobody = 无人
pool-widen-confirm = 要将池“{ $name }”开放给所有人吗？每个人和每个令牌都将能使用它的模型，而不仅是现在允许的组。
pool-widen-action = 开放给所有人

error-access-widening = 移除所有组会将此池开放给所有人：如要允许，请选择“所有人”。

account-title = 账户
account-intro = 已以 { $username } 身份登录。可在此修改密码。
account-link = 您的账户：修改密码
account-password = 修改密码
account-current-password = 当前密码
account-new-password = 新密码
account-new-password-hint = 以您身份登录的其他浏览器将被登出；当前浏览器保持登录。
account-confirm-password = 再次输入新密码
account-password-save = 修改密码
account-password-changed = 您的密码已修改。
account-password-mismatch = 两次输入的新密码不一致。
password-refused = 此密码未被接受：
password-reason-password-too-short = 太短：请至少使用 { $min_length } 个字符。
password-reason-password-too-similar = 与用户名或电子邮件地址过于相似。
password-reason-password-too-common = 太常见：它出现在常用密码列表中。
password-reason-password-entirely-numeric = 只包含数字。
error-wrong-password = 当前密码不正确。
user-priority = 优先级
user-max-priority = 令牌最高：{ $priority }
user-groups-hint = 此人所属的组；默认组本来就包含所有人。
user-groups-none = 暂无可选的组（默认组包含所有人）。

token-raised-by = 管理员 { $admin } 将此令牌设为“{ $priority }”。您可以调低它，但不能再调回：您最高只能选择“{ $max }”。
token-raised-by-unknown = 一位管理员将此令牌设为“{ $priority }”。您可以调低它，但不能再调回：您最高只能选择“{ $max }”。
