# The API reference page and the footer that links to it.

footer-label = More
footer-api-reference = API reference
api-reference-title = API reference
api-reference-intro = Every operation of the /api/v0 REST API, from its OpenAPI document. Signed in, "Try it out" calls it with your session.
api-reference-document = The OpenAPI document (JSON)
api-reference-failed = The API reference viewer could not be loaded.
