# Administración diaria: bloqueo tras contraseñas incorrectas, conservación de la auditoría, descripción del selector de colores.

daily-password-locked = Demasiadas contraseñas incorrectas. Espere unos minutos y vuelva a intentarlo.

setting-audit-retention-days = Conservar la auditoría (días)
setting-audit-retention-days-hint = Las entradas más antiguas del registro de auditoría se eliminan cada hora.

daily-theme-tooltip = Colores de las páginas: claros, oscuros o según su sistema
