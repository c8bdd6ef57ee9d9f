# Administration : paramètres, groupes, utilisateurs, tous les jetons.

admin-settings-title = Paramètres
admin-settings-intro = Paramètres d’exploitation : priorisation des requêtes, priorité par défaut du système et durée d’attente maximale d’une requête avant qu’une capacité se libère.
admin-groups-title = Groupes
admin-groups-intro = Les groupes de la passerelle déterminent qui peut utiliser quels modèles, qui administre aiplane et la priorité de leurs membres.
admin-users-title = Utilisateurs
admin-users-intro = Comptes locaux pouvant se connecter à aiplane.
admin-tokens-title = Tous les jetons
admin-tokens-intro = Chaque jeton d’API avec son propriétaire et sa priorité.

admin-section-access = Accès
admin-section-gateway = Passerelle
setting-priority-enabled = Activer la priorisation des requêtes
setting-priority-default = Priorité par défaut du système
setting-upstream-wait = Délai d’attente en secondes
