# The API reference page and the footer that links to it.

footer-label = Ещё
footer-api-reference = Справочник API
api-reference-title = Справочник API
api-reference-intro = Все операции REST API /api/v0 по его документу OpenAPI. После входа «Try it out» вызывает их от имени вашей сессии.
api-reference-document = Документ OpenAPI (JSON)
api-reference-failed = Не удалось загрузить просмотр справочника API.
