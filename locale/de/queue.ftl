# Die Warteschlange in Echtzeit.

queue-title = Warteschlange
queue-intro = Anfragen, die auf einen freien Platz bei einem Backend warten, höchste Priorität zuerst.
queue-empty = Keine Anfrage wartet.
