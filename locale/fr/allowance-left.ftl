# Ce qui reste de son quota, dans le panneau d'utilisation de la page des jetons.

my-allowance-title = Ce qui reste de votre quota
my-allowance-intro = Compté par périodes fixes en UTC : la minute, le jour, le mois. Une requête en cours réserve le maximum qu'elle peut consommer jusqu'à sa fin.
my-allowance-mine = Vos limites (tous vos jetons ensemble)
my-allowance-token = Limites propres du jeton « { $name } »
my-allowance-unlimited = Aucune limite : vous pouvez utiliser autant que vous le souhaitez.
my-allowance-limit = Limite
my-allowance-used = Utilisé
my-allowance-remaining = Restant
my-allowance-resets = Remise à zéro à
my-allowance-of = { $used } sur { $limit }
my-allowance-held = réservé par des requêtes en cours : { $amount }
my-allowance-unknown = inconnu pour le moment
