# 实时准入队列。

queue-title = 队列
queue-intro = 正在等待后端空闲槽位的请求，优先级最高的排在最前。
queue-empty = 没有等待中的请求。
