# 请求活动记录。

activity-title = 活动
activity-intro = 最近的请求及其优先级、排队时间和结果。
activity-empty = 尚未记录任何请求。
