# The API reference page and the footer that links to it.

footer-label = Plus
footer-api-reference = Référence de l’API
api-reference-title = Référence de l’API
api-reference-intro = Toutes les opérations de l’API REST /api/v0, tirées de son document OpenAPI. Une fois connecté, « Try it out » les appelle avec votre session.
api-reference-document = Le document OpenAPI (JSON)
api-reference-failed = L’afficheur de la référence de l’API n’a pas pu être chargé.
