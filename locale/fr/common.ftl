# Mise en page, navigation, boutons et mots communs, noms des langues.

product-name = aiplane
product-tagline = Passerelle LLM
page-title = { $page } · aiplane
skip-to-content = Aller au contenu
nav-label = Navigation principale
nav-menu = Menu
nav-tokens = Jetons
nav-playground = Bac à sable
nav-admin = Administration
nav-admin-settings = Paramètres
nav-admin-groups = Groupes
nav-admin-users = Utilisateurs
nav-admin-tokens = Jetons
nav-admin-backends = Serveurs
nav-admin-queue = File d’attente
nav-admin-activity = Activité

language-label = Langue
language-name-en = Anglais
language-name-de = Allemand
language-name-fr = Français
language-name-es = Espagnol
language-name-ru = Russe
language-name-zh = Chinois
signed-in-as = Connecté en tant que { $username }
sign-out = Se déconnecter

action-save = Enregistrer
action-cancel = Annuler
action-close = Fermer
action-create = Créer
action-delete = Supprimer
action-dismiss = Masquer
action-edit = Modifier
column-actions = Actions
status-loading = Chargement…
status-saving = Enregistrement…
status-saved = Enregistré.
value-never = Jamais
value-none = —
value-yes = Oui
value-no = Non
value-on = Activé
value-off = Désactivé
value-not-reported = Non indiqué
duration-seconds = { $seconds } s
duration-minutes = { $minutes } min { $seconds } s
duration-hours = { $hours } h { $minutes } min
duration-ms = { $ms } ms

priority-label = Priorité
priority-inherit = Hériter
priority-inherit-with = Hériter ({ $priority })
priority-low = Basse
priority-medium = Moyenne
priority-high = Haute

shell-pending = Les commandes de cette page ne sont pas encore disponibles.

forbidden-title = Accès refusé
forbidden-body = Cette page est réservée aux administrateurs. Demandez l’accès à un administrateur si vous en avez besoin.
not-found-title = Page introuvable
not-found-body = Il n’y a aucune page à cette adresse.
back-home = Retour à vos jetons
