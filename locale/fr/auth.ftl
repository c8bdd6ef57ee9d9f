# Connexion et déconnexion.

login-title = Connexion
login-intro = Connectez-vous avec votre compte aiplane.
login-username = Nom d’utilisateur
login-password = Mot de passe
login-submit = Se connecter
login-failed = Le nom d’utilisateur ou le mot de passe est incorrect, ou le compte est désactivé.
login-missing = Saisissez votre nom d’utilisateur et votre mot de passe.
login-signed-out = Vous avez été déconnecté.
login-too-many = { $minutes ->
    [one] Trop de tentatives de connexion échouées. Réessayez dans une minute.
   *[other] Trop de tentatives de connexion échouées. Réessayez dans { $minutes } minutes.
}
