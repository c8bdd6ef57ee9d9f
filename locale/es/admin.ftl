# Administración: ajustes, grupos, usuarios, todos los tokens.

admin-settings-title = Ajustes
admin-settings-intro = Ajustes de operación: priorización de solicitudes, la prioridad predeterminada del sistema y cuánto tiempo puede esperar una solicitud a que haya capacidad libre.
admin-groups-title = Grupos
admin-groups-intro = Los grupos de la pasarela deciden quién puede usar qué modelos, quién administra aiplane y la prioridad de sus miembros.
admin-users-title = Usuarios
admin-users-intro = Cuentas locales que pueden iniciar sesión en aiplane.
admin-tokens-title = Todos los tokens
admin-tokens-intro = Cada token de API con su propietario y su prioridad.

admin-section-access = Acceso
admin-section-gateway = Pasarela
setting-priority-enabled = Activar la priorización de solicitudes
setting-priority-default = Prioridad predeterminada del sistema
setting-upstream-wait = Tiempo de espera en segundos
