# 管理：队列、后端、池、用户和组页面的细节修补，密码，重命名。

queue-order-intro = 每一组是一组后端，组内请求共享这些后端的槽位；第一行将获得下一个空闲槽位。先由优先级类别决定，再按调度器的顺序：分数（serial 调度器）、提示和已等待时间。
queue-position = 位次
queue-position-value = 第 { $position } 位
queue-score = 分数
queue-waits-for = 等待后端
queue-line-heading = { $backends }：{ $count } 个请求正在等待
