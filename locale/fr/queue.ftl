# La file d’attente en direct.

queue-title = File d’attente
queue-intro = Les requêtes qui attendent une place libre sur un serveur, la priorité la plus haute en premier.
queue-empty = Aucune requête n’est en attente.
