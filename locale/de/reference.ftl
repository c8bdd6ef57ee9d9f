# The API reference page and the footer that links to it.

footer-label = Weiteres
footer-api-reference = API-Referenz
api-reference-title = API-Referenz
api-reference-intro = Alle Operationen der REST-API /api/v0, aus ihrem OpenAPI-Dokument. Angemeldet ruft „Try it out“ sie mit Ihrer Sitzung auf.
api-reference-document = Das OpenAPI-Dokument (JSON)
api-reference-failed = Die Anzeige der API-Referenz konnte nicht geladen werden.
