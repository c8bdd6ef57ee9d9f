# The API reference page and the footer that links to it.

footer-label = 更多
footer-api-reference = API 参考
api-reference-title = API 参考
api-reference-intro = /api/v0 REST API 的全部操作，来自其 OpenAPI 文档。登录后，“Try it out”会以您的会话调用它们。
api-reference-document = OpenAPI 文档（JSON）
api-reference-failed = 无法加载 API 参考查看器。
