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
