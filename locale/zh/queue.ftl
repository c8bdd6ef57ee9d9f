# 实时准入队列。

queue-title = 队列
queue-intro = 正在等待后端空闲槽位的请求，按将被调度的顺序排列。
queue-empty = 没有等待中的请求。
queue-priority-off = 请求优先级已关闭：所有请求在同一类别中按到达顺序等待。
queue-depth = 各类别等待数
queue-waiters = 等待中的请求
queue-class = 类别
queue-model = 模型
queue-user = 用户
queue-token = 令牌
queue-token-session = 浏览器（试验场）
queue-age = 已等待
queue-estimate = 预计等待
queue-estimate-intro = 预计等待按排在它前面的请求数和这些后端最近接收请求的速度估算；在它们接收几个请求之前为未知。
queue-estimate-unknown = 未知
queue-estimate-under-second = 不到 1 秒
queue-estimate-seconds = 约 { $seconds } 秒
queue-estimate-minutes = 约 { $minutes } 分钟
queue-estimate-hours = 约 { $hours } 小时
queue-backends = 后端
queue-backends-empty = 没有正在服务的后端。
queue-backend = 后端
queue-health = 状态

queue-recent = 最近的调度
queue-recent-intro = 最近 20 个获得后端槽位的请求，最新的排在最前。
queue-recent-empty = 网关启动以来还没有调度过任何请求。
queue-recent-time = 时间
queue-recent-waited = 排队时间
queue-recent-ago = { $duration }前

live-connecting = 正在连接…
live-connected = 实时
live-polling = 每 2 秒更新一次
live-offline = 实时数据不可用
live-stopped = 已停止
live-not-admin = 您已不再是管理员，实时队列已停止。权限恢复后请重新加载页面。
live-signed-out = 您已退出登录，实时队列已停止。请重新登录以继续查看。
