"""The API dialects of /v1, one package each, over one plan per dispatch. Imports only
gateway.core; never aiohttp or Django."""
