# Jetons d’API personnels.

tokens-title = Jetons d’API
tokens-intro = Les programmes appellent la passerelle avec l’un de ces jetons comme jeton porteur. Un jeton hérite de votre priorité, sauf si vous lui en attribuez une autre.
tokens-empty = Vous n’avez encore aucun jeton.
tokens-create = Créer un jeton
tokens-list-label = Vos jetons
tokens-owner-priority = Votre priorité héritée : { $priority }
tokens-max-priority = Priorité la plus haute que vous pouvez choisir : { $priority }
tokens-priority-disabled = La priorisation des requêtes est désactivée pour le moment. Vos choix prendront effet dès qu’un administrateur l’activera.

token-prefix = Commence par
token-created = Créé le
token-last-used = Dernière utilisation
token-expires = Expire le
token-status-active = Actif
token-status-revoked = Révoqué
token-status-expired = Expiré
token-priority-saved = Priorité enregistrée.
token-actions = Actions pour { $name }
token-revoke = Révoquer
token-rotate = Renouveler
token-delete = Supprimer
token-revoke-confirm = Révoquer « { $name } » ? Les programmes qui l’utilisent cesseront immédiatement de fonctionner.
token-rotate-confirm = Renouveler « { $name } » ? Le secret actuel ne fonctionnera plus et un nouveau sera affiché une seule fois.
token-delete-confirm = Supprimer définitivement « { $name } » ?
token-revoked = Jeton « { $name } » révoqué.
token-deleted = Jeton « { $name } » supprimé.
token-revoked-by = Révoqué par { $name } le { $date }.
token-revoked-on = Révoqué le { $date }.

create-title = Créer un jeton
create-name = Nom
create-name-hint = Par exemple le programme ou la machine qui l’utilisera.
create-priority-hint = « Hériter » suit vos groupes. Choisissez une priorité plus basse pour les tâches de fond.
create-submit = Créer le jeton

secret-title = Copiez votre jeton maintenant
secret-once = C’est la seule fois que le jeton est affiché. Conservez-le en lieu sûr.
secret-label = Nouveau jeton
secret-copy = Copier
secret-copied = Copié dans le presse-papiers.
secret-copy-failed = La copie a échoué. Sélectionnez le jeton et copiez-le à la main.
secret-done = Terminé
