# 登录和退出。

login-title = 登录
login-intro = 使用您的 aiplane 账户登录。
login-username = 用户名
login-password = 密码
login-submit = 登录
login-failed = 用户名或密码错误，或账户已被停用。
login-missing = 请输入用户名和密码。
login-signed-out = 您已退出登录。
login-too-many = 登录失败次数过多，请在 { $minutes } 分钟后重试。
