# Inicio y cierre de sesión.

login-title = Iniciar sesión
login-intro = Inicie sesión con su cuenta de aiplane.
login-username = Nombre de usuario
login-password = Contraseña
login-submit = Iniciar sesión
login-failed = El nombre de usuario o la contraseña son incorrectos, o la cuenta está desactivada.
login-missing = Introduzca su nombre de usuario y su contraseña.
login-signed-out = Ha cerrado la sesión.
login-too-many = { $minutes ->
    [one] Demasiados intentos fallidos de inicio de sesión. Vuelva a intentarlo en un minuto.
   *[other] Demasiados intentos fallidos de inicio de sesión. Vuelva a intentarlo en { $minutes } minutos.
}
