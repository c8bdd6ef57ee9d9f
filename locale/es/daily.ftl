# Administración diaria: bloqueo tras contraseñas incorrectas en la página de la cuenta.

daily-password-locked = Demasiadas contraseñas incorrectas. Espere unos minutos y vuelva a intentarlo.
