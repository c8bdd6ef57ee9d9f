# Backends und Pools.

backends-title = Backends
backends-intro = Die Modellserver hinter dem Gateway, ihre Kapazität und wie die Priorität einer Anfrage an sie weitergegeben wird.
backend-priority-mode = Weitergabe der Priorität
backend-priority-auto = Automatisch
backend-priority-gateway = Nur im Gateway
backend-priority-custom = Manuelle Zuordnung
