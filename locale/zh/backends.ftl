# 后端和资源池。

backends-title = 后端
backends-intro = 网关背后的模型服务器、它们的容量，以及请求优先级如何转发给它们。
backend-priority-mode = 优先级转发
backend-priority-auto = 自动
backend-priority-gateway = 仅网关
backend-priority-custom = 手动映射
