# La file d’attente en direct.

queue-title = File d’attente
queue-intro = Les requêtes qui attendent une place libre sur un serveur, dans l’ordre où elles seront servies.
queue-empty = Aucune requête n’est en attente.
queue-priority-off = La priorisation des requêtes est désactivée : toutes les requêtes attendent dans une seule classe, dans leur ordre d’arrivée.
queue-depth = En attente par classe
queue-waiters = Requêtes en attente
queue-class = Classe
queue-model = Modèle
queue-user = Utilisateur
queue-token = Jeton
queue-token-session = Navigateur (bac à sable)
queue-age = Attend depuis
queue-estimate = Attente estimée
queue-estimate-intro = L’attente estimée compte les requêtes placées avant, au rythme auquel ses serveurs ont pris des requêtes récemment ; elle reste inconnue tant qu’ils n’en ont pas pris quelques-unes.
queue-estimate-unknown = inconnue
queue-estimate-under-second = moins d’1 s
queue-estimate-seconds = environ { $seconds } s
queue-estimate-minutes = environ { $minutes } min
queue-estimate-hours = environ { $hours } h
queue-backends = Serveurs
queue-backends-empty = Aucun serveur n’est en service.
queue-backend = Serveur
queue-health = État

queue-recent = Dernières attributions
queue-recent-intro = Les 20 dernières requêtes qui ont obtenu une place sur un serveur, la plus récente en premier.
queue-recent-empty = Aucune requête n’a été attribuée depuis le démarrage de la passerelle.
queue-recent-time = Heure
queue-recent-waited = Attente en file
queue-recent-ago = il y a { $duration }

live-connecting = Connexion…
live-connected = En direct
live-polling = Mise à jour toutes les 2 secondes
live-offline = Données en direct indisponibles
live-stopped = Arrêtée
live-not-admin = Vous n’êtes plus administrateur : la file d’attente en direct s’est arrêtée. Rechargez la page une fois vos droits rétablis.
live-signed-out = Vous avez été déconnecté : la file d’attente en direct s’est arrêtée. Reconnectez-vous pour la suivre.
