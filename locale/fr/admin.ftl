# Administration : paramètres, groupes, utilisateurs, tous les jetons.

admin-settings-title = Paramètres
admin-settings-intro = Paramètres d’exploitation : priorisation des requêtes, priorité par défaut du système et durée d’attente maximale d’une requête avant qu’une capacité se libère.
admin-groups-title = Groupes
admin-groups-intro = Les groupes de la passerelle déterminent qui administre aiplane et la priorité de leurs membres ; les modèles qu’ils peuvent utiliser se règlent sur chaque pool (Serveurs → Pools).
admin-users-title = Utilisateurs
admin-users-intro = Comptes locaux pouvant se connecter à aiplane.
admin-tokens-title = Tous les jetons
admin-tokens-intro = Chaque jeton d’API avec son propriétaire et sa priorité.

## Paramètres

settings-section-access-gateway = Accès › Passerelle
settings-section-access-gateway-intro = La priorisation des requêtes et la file d’attente qui les ordonne tant que tous les serveurs sont occupés.
settings-section-observability = Observabilité
settings-section-observability-intro = Durée de conservation des enregistrements d’activité de chaque requête.
settings-save = Enregistrer les paramètres
settings-save-hint = Toutes les valeurs sont enregistrées ensemble ; si l’une n’est pas autorisée, rien ne change.
settings-saved = Paramètres enregistrés.
setting-default = Par défaut : { $value }.
setting-error = { $setting } : { $message }
setting-error-range = { $setting } doit être un nombre entier compris entre { $min } et { $max }.

setting-gateway-priority-enabled = Activer la priorisation des requêtes
setting-gateway-priority-enabled-hint = Désactivée, toutes les requêtes forment une seule classe et la file les sert dans leur ordre d’arrivée.
setting-gateway-priority-default = Priorité par défaut du système
setting-gateway-priority-default-hint = La priorité des personnes dont les groupes n’en fixent aucune.
setting-gateway-upstream-wait-secs = Budget d’attente (secondes)
setting-gateway-upstream-wait-secs-hint = Durée pendant laquelle une requête peut attendre un serveur libre avant d’échouer pour « capacité épuisée ». Avec 0, elle est tout de même tentée une fois.
setting-gateway-scheduler = Ordonnanceur
setting-gateway-scheduler-hint = Strict : haute avant moyenne avant basse, ordre d’arrivée au sein d’une classe. À points : ajoute l’ancienneté et l’affinité de cache. Premier arrivé : la priorité sert d’avance. Invite la plus courte pondérée : les invites courtes d’abord, pondérées par la priorité. Échéance la plus proche d’abord : au sein d’une classe, une requête qui a demandé à attendre moins (X-AIplane-Max-Wait) passe en premier.
setting-gateway-scheduler-strict = Priorité stricte
setting-gateway-scheduler-serial = À points (ancienneté, affinité)
setting-gateway-scheduler-fcfs = Premier arrivé, premier servi
setting-gateway-scheduler-wspt = Invite la plus courte pondérée
setting-gateway-scheduler-edf = Échéance la plus proche d’abord
setting-gateway-aging-divisor-secs = Diviseur d’ancienneté (secondes)
setting-gateway-aging-divisor-secs-hint = Ordonnanceur à points : une attente de cette durée ajoute un point au score d’une requête. 0 désactive l’ancienneté.
setting-gateway-affinity-bonus = Bonus d’affinité de cache
setting-gateway-affinity-bonus-hint = Ordonnanceur à points : points accordés à une requête dont le serveur au cache déjà chargé a la place libre (0 à 99).
setting-gateway-max-waiters = Nombre maximal de requêtes en attente
setting-gateway-max-waiters-hint = Au-delà, les nouvelles requêtes sont refusées aussitôt avec 429. 0 signifie sans limite.
setting-gateway-fair-share = Partage équitable au sein d’une classe
setting-gateway-fair-share-hint = Ordonnanceur strict : au sein d’une classe, les personnes passent à tour de rôle, pour que les nombreuses requêtes de l’une n’évincent pas celles des autres.
setting-gateway-fair-share-by = Le partage équitable compte
setting-gateway-fair-share-by-hint = Requêtes : chaque requête est un tour. Jetons : chacun est servi selon les jetons consommés (invite plus deux fois la sortie, tels que le moteur les rapporte), pour que les longues invites d’une personne n’évincent pas les courtes des autres.
setting-gateway-fair-share-by-requests = Requêtes
setting-gateway-fair-share-by-tokens = Jetons
setting-gateway-fair-share-half-life-secs = Le partage équitable oublie après (demi-vie, secondes)
setting-gateway-fair-share-half-life-secs-hint = Par jetons : ce qu’une personne a consommé au-delà des autres diminue de moitié toutes les N secondes. 0 n’oublie jamais.
setting-gateway-headroom-secs = Durée de la réserve (secondes)
setting-gateway-headroom-secs-hint = La réserve d’un backend garde ses derniers emplacements hors de portée d’une classe tant qu’une requête d’une classe supérieure est arrivée pendant ce délai ; sinon, chaque classe peut tous les utiliser.
setting-gateway-preemption = Préempter les classes inférieures en préremplissage
setting-gateway-preemption-hint = Une requête d’une classe supérieure qui doit attendre un backend y interrompt un flux d’une classe inférieure qui n’a pas encore envoyé son premier événement (le moteur lit encore son prompt) : celui-ci revient en tête de sa classe et attend de nouveau, son client ne voyant qu’une attente plus longue. Chaque requête est interrompue au plus une fois ; les réponses entières (non diffusées) jamais.
setting-gateway-connect-timeout-secs = Délai de connexion (secondes)
setting-gateway-connect-timeout-secs-hint = Combien de temps attendre qu’un serveur de modèles accepte une connexion avant d’essayer une autre réplique.
setting-gateway-first-byte-timeout-secs = Délai avant le premier octet (secondes)
setting-gateway-first-byte-timeout-secs-hint = Combien de temps un serveur de modèles peut mettre à commencer sa réponse (le préremplissage d’un long prompt prend du temps : soyez généreux) ; au-delà, la requête échoue avec 504.
setting-gateway-idle-timeout-secs = Délai d’inactivité entre deux morceaux (secondes)
setting-gateway-idle-timeout-secs-hint = Combien de temps une réponse commencée peut s’interrompre entre deux morceaux ; au-delà, elle se termine par une erreur et la place est libérée.
setting-gateway-media-urls = URL de médias que les moteurs peuvent récupérer
setting-gateway-media-urls-hint = Les moteurs récupèrent eux-mêmes les URL d’image, d’audio et de vidéo d’une requête, depuis l’intérieur de votre réseau. « Publiques seulement » refuse (400) file: et les autres schémas, ainsi que les hôtes qui sont des adresses ou des noms de bouclage, privés, lien-local ou de métadonnées cloud ; les URL data: passent toujours. Les noms d’hôte ne sont pas résolus : filtrez le trafic sortant des moteurs par un pare-feu.
setting-gateway-media-urls-public = Hôtes publics et URL data: seulement
setting-gateway-media-urls-any = Toute URL (les moteurs récupèrent ce que les clients envoient)
setting-activity-retention-days = Conserver l’activité (jours)
setting-activity-retention-days-hint = Les enregistrements plus anciens sont supprimés toutes les heures.

## Groupes

groups-caption = Groupes de la passerelle
groups-empty = Il n’y a encore aucun groupe.
group-new = Nouveau groupe
group-new-title = Nouveau groupe
group-edit-title = Modifier le groupe « { $name } »
group-name = Nom
group-name-hint = Lettres, chiffres, points, traits de soulignement ou tirets. Le renommer conserve toutes les références.
group-description = Description
group-roles = Rôles
group-members = Membres
group-members-filter = Filtrer les utilisateurs
group-members-none = Il n’y a encore aucun utilisateur.
group-members-everyone = Tout le monde (groupe par défaut)
group-members-nobody = Aucun membre
group-priority-hint = Les membres héritent de la priorité la plus haute de tous leurs groupes. « Non définie » s’en remet à leurs autres groupes ou à la valeur par défaut du système.
group-priority-none = Non définie
group-priority-of = Priorité du groupe { $name }
group-priority-saved = Priorité du groupe « { $name } » enregistrée.
group-is-admin = Administrateurs
group-is-admin-hint = Les membres peuvent administrer aiplane.
group-is-default = Groupe par défaut
group-is-default-hint = Tous les utilisateurs en font partie sans y être inscrits.
group-badge-admin = Administrateurs
group-badge-default = Par défaut
group-actions = Actions pour le groupe { $name }
group-delete-confirm = Supprimer le groupe « { $name } » ? Ses membres perdent ce qu’il leur accordait.
group-deleted = Groupe « { $name } » supprimé.
group-saved = Groupe « { $name } » enregistré.
group-created = Groupe « { $name } » créé.

## Utilisateurs

users-caption = Comptes locaux
user-new = Nouvel utilisateur
user-new-title = Nouvel utilisateur
user-edit-title = Modifier l’utilisateur « { $name } »
user-create = Créer l’utilisateur
user-username = Nom d’utilisateur
user-username-hint = Lettres, chiffres et @ . + - _ uniquement.
user-email = Adresse e-mail
user-password = Mot de passe
user-password-hint = Sans mot de passe, le compte ne peut pas se connecter tant qu’il n’en a pas reçu un.
user-new-password = Nouveau mot de passe
user-new-password-hint = Laissez vide pour garder le mot de passe actuel.
user-active = Actif
user-active-hint = Les comptes inactifs ne peuvent pas se connecter et leurs jetons cessent de fonctionner.
user-status = État
user-groups = Groupes
user-last-login = Dernière connexion
user-badge-active = Actif
user-badge-inactive = Inactif
user-badge-admin = Administrateur
user-is-you = C’est vous
user-actions = Actions pour l’utilisateur { $name }
user-delete-confirm = Supprimer le compte « { $name } » et tous ses jetons ?
user-deleted = Utilisateur « { $name } » supprimé.
user-saved = Utilisateur « { $name } » enregistré.
user-created = Utilisateur « { $name } » créé.

## Tous les jetons

admin-tokens-caption = Tous les jetons d’API
admin-tokens-empty = Personne n’a encore créé de jeton.
admin-tokens-filter = Filtrer par jeton ou propriétaire
admin-tokens-count = { $shown } jetons affichés sur { $total }
admin-tokens-priority-disabled = La priorisation des requêtes est désactivée : ces choix prendront effet une fois qu’elle sera activée dans les Paramètres.
admin-token-name = Jeton
admin-token-owner = Propriétaire
admin-token-state = État
admin-token-effective = En vigueur
admin-token-priority-of = Priorité du jeton { $name } de { $owner }
admin-token-inherits = Hérite de la priorité { $priority } des groupes du propriétaire.
admin-token-set-by-admin = Définie par { $name } (administrateur).
admin-token-set-by-owner = Définie par { $name } (propriétaire).
admin-token-actions = Actions pour le jeton { $name } de { $owner }
admin-token-revoke-confirm = Révoquer « { $name } » de { $owner } ? Les programmes qui l’utilisent cesseront immédiatement de fonctionner, et { $owner } verra que vous l’avez révoqué.
admin-token-delete-confirm = Supprimer définitivement « { $name } » de { $owner } ? Les programmes qui l’utilisent cesseront immédiatement de fonctionner.
admin-token-revoked = Jeton « { $name } » de { $owner } révoqué.
admin-token-deleted = Jeton « { $name } » de { $owner } supprimé.
