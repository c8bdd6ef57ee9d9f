# Administration : finitions des pages File d’attente, Serveurs, Pools, Utilisateurs et Groupes, mots de passe, renommage.

queue-order-intro = Chaque file regroupe les serveurs dont ses requêtes se partagent les places ; la première ligne obtient la prochaine place libre. La classe décide d’abord, puis l’ordre de l’ordonnanceur : le score (ordonnanceur « serial »), l’indication et le temps d’attente.
queue-position = Rang
queue-position-value = { $position }
queue-score = Score
queue-waits-for = Attend
queue-line-heading = { $backends } : { $count ->
    [one] une requête attend
   *[other] { $count } requêtes attendent
}

backend-no-pool = Dans aucun pool : personne ne peut appeler ses modèles (ils répondent 404) tant qu’aucun pool n’inclut ce serveur.
backend-saved-no-pool = Serveur « { $name } » enregistré, mais il n’est dans aucun pool : ses modèles répondent 404 tant qu’aucun pool ne l’inclut.
backend-detect-failed = La détection de { $name } a échoué : sa carte indique pourquoi.
backend-detect-failed-unreachable = Échec de la détection : { $url } n’a pas répondu ({ $error }).
backend-detect-failed-status = Échec de la détection : { $url } a répondu { $status } ({ $error }).
backend-detect-failed-not-models = Échec de la détection : { $url } a répondu, mais pas par une liste de modèles ({ $error }).
backend-part-pools = Pools
backend-pools-hint = Les pools dans lesquels ce serveur sert ; chaque pool décide qui peut appeler ses modèles.
backend-pools-none = Aucun pool n’existe encore : créez-en un sous Pools, puis ajoutez-y ce serveur.

pool-access = Qui peut l’utiliser
pool-access-everyone = Tout le monde
pool-access-everyone-hint = Chaque personne et chaque jeton, quels que soient leurs groupes.
pool-access-groups = Seulement les membres de ces groupes
pool-access-nobody = Aucun groupe coché : personne ne peut utiliser ce pool.
pool-groups-nobody = Personne
pool-widen-confirm = Ouvrir le pool « { $name } » à tout le monde ? Chaque personne et chaque jeton pourra utiliser ses modèles, pas seulement les groupes autorisés aujourd’hui.
pool-widen-action = Ouvrir à tout le monde

error-access-widening = Retirer tous les groupes ouvrirait le pool à tout le monde : choisissez « Tout le monde » pour l’autoriser.

account-title = Compte
account-intro = Connecté en tant que { $username }. Changez votre mot de passe ici.
account-link = Votre compte : changer le mot de passe
account-password = Changer le mot de passe
account-current-password = Mot de passe actuel
account-new-password = Nouveau mot de passe
account-new-password-hint = Les autres navigateurs connectés à votre compte sont déconnectés ; celui-ci reste connecté.
account-confirm-password = Nouveau mot de passe, à nouveau
account-password-save = Changer le mot de passe
account-password-changed = Votre mot de passe a été changé.
account-password-mismatch = Les deux nouveaux mots de passe diffèrent.
password-refused = Le mot de passe n’est pas accepté :
password-reason-password-too-short = Il est trop court : utilisez au moins { $min_length } caractères.
password-reason-password-too-similar = Il ressemble trop au nom d’utilisateur ou à l’adresse e-mail.
password-reason-password-too-common = Il est trop courant : il figure dans les listes de mots de passe souvent utilisés.
password-reason-password-entirely-numeric = Il ne contient que des chiffres.
error-wrong-password = Le mot de passe actuel est incorrect.
user-priority = Priorité
user-max-priority = jetons jusqu’à { $priority }
user-groups-hint = Les groupes dont cette personne est membre ; les groupes par défaut incluent déjà tout le monde.
user-groups-none = Il n’y a pas encore de groupe à choisir (les groupes par défaut incluent tout le monde).

token-raised-by = L’administrateur { $admin } a réglé ce jeton sur { $priority }. Vous pouvez l’abaisser, mais pas le relever ensuite : vous pouvez choisir au plus { $max }.
token-raised-by-unknown = Un administrateur a réglé ce jeton sur { $priority }. Vous pouvez l’abaisser, mais pas le relever ensuite : vous pouvez choisir au plus { $max }.
