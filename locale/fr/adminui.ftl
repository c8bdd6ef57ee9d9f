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
