# Administración: ajustes, grupos, usuarios, todos los tokens.

admin-settings-title = Ajustes
admin-settings-intro = Ajustes de operación: priorización de solicitudes, la prioridad predeterminada del sistema y cuánto tiempo puede esperar una solicitud a que haya capacidad libre.
admin-groups-title = Grupos
admin-groups-intro = Los grupos de la pasarela deciden quién administra aiplane y la prioridad de sus miembros; qué modelos pueden usar se decide en cada pool (Servidores → Pools).
admin-users-title = Usuarios
admin-users-intro = Cuentas locales que pueden iniciar sesión en aiplane.
admin-tokens-title = Todos los tokens
admin-tokens-intro = Cada token de API con su propietario y su prioridad.

## Ajustes

settings-section-access-gateway = Acceso › Pasarela
settings-section-access-gateway-intro = La priorización de solicitudes y la cola que las ordena mientras todos los servidores están ocupados.
settings-section-observability = Observabilidad
settings-section-observability-intro = Cuánto tiempo se conservan los registros de actividad de cada solicitud.
settings-save = Guardar ajustes
settings-save-hint = Todos los valores se guardan juntos; si uno no está permitido, no cambia nada.
settings-saved = Ajustes guardados.
setting-default = Predeterminado: { $value }.
setting-error = { $setting }: { $message }
setting-error-range = { $setting } debe ser un número entero entre { $min } y { $max }.

setting-gateway-priority-enabled = Activar la priorización de solicitudes
setting-gateway-priority-enabled-hint = Desactivada, todas las solicitudes forman una sola clase y la cola las atiende por orden de llegada.
setting-gateway-priority-default = Prioridad predeterminada del sistema
setting-gateway-priority-default-hint = La prioridad de las personas cuyos grupos no fijan ninguna.
setting-gateway-upstream-wait-secs = Tiempo máximo de espera (segundos)
setting-gateway-upstream-wait-secs-hint = Cuánto puede esperar una solicitud a un servidor libre antes de fallar por «capacidad agotada». Con 0 se intenta igualmente una vez.
setting-gateway-scheduler = Planificador
setting-gateway-scheduler-hint = Estricto: alta antes que media antes que baja, por orden de llegada dentro de una clase. Por puntos: añade antigüedad y afinidad de caché. Por orden de llegada: la prioridad da ventaja. Prompt más corto ponderado: primero los prompts cortos, ponderados por prioridad. Plazo más próximo primero: dentro de una clase, pasa antes la solicitud que pidió esperar menos (X-AIplane-Max-Wait).
setting-gateway-scheduler-strict = Prioridad estricta
setting-gateway-scheduler-serial = Por puntos (antigüedad, afinidad)
setting-gateway-scheduler-fcfs = Por orden de llegada
setting-gateway-scheduler-wspt = Prompt más corto ponderado
setting-gateway-scheduler-edf = Plazo más próximo primero
setting-gateway-aging-divisor-secs = Divisor de antigüedad (segundos)
setting-gateway-aging-divisor-secs-hint = Planificador por puntos: esperar este tiempo suma un punto a la puntuación de una solicitud. 0 desactiva la antigüedad.
setting-gateway-affinity-bonus = Bonificación por afinidad de caché
setting-gateway-affinity-bonus-hint = Planificador por puntos: puntos para una solicitud cuyo servidor con la caché preparada tiene el hueco libre (de 0 a 99).
setting-gateway-max-waiters = Máximo de solicitudes en espera
setting-gateway-max-waiters-hint = Por encima de esta cifra, las nuevas solicitudes se rechazan al instante con 429. 0 significa sin límite.
setting-gateway-fair-share = Reparto equitativo dentro de una clase
setting-gateway-fair-share-hint = Planificador estricto: dentro de una clase las personas se turnan, para que las muchas solicitudes de una no desplacen las de los demás.
setting-gateway-fair-share-by = El reparto justo cuenta
setting-gateway-fair-share-by-hint = Solicitudes: cada solicitud es un turno. Tokens: cada persona recibe servicio según los tokens que consumió (prompt más el doble de la salida, según el motor), para que los prompts largos de una persona no desplacen los cortos de otras.
setting-gateway-fair-share-by-requests = Solicitudes
setting-gateway-fair-share-by-tokens = Tokens
setting-gateway-fair-share-half-life-secs = El reparto justo olvida tras (vida media, segundos)
setting-gateway-fair-share-half-life-secs-hint = Por tokens: lo que una persona consumió por encima de las demás se reduce a la mitad cada tantos segundos. 0 nunca olvida.
setting-gateway-headroom-secs = Duración de la reserva (segundos)
setting-gateway-headroom-secs-hint = La reserva de un backend guarda sus últimas plazas fuera del alcance de una clase mientras haya llegado una solicitud de una clase superior en este tiempo; si no llega ninguna, cada clase puede usarlas todas.
setting-gateway-preemption = Desalojar clases inferiores en prellenado
setting-gateway-preemption-hint = Una solicitud de una clase superior que debe esperar un backend interrumpe allí un flujo de una clase inferior que aún no ha enviado su primer evento (el motor aún lee su prompt): este vuelve a la cabeza de su clase y espera de nuevo; su cliente solo ve una espera más larga. Cada solicitud se interrumpe como mucho una vez; las respuestas enteras (sin streaming) nunca.
setting-gateway-connect-timeout-secs = Tiempo de conexión (segundos)
setting-gateway-connect-timeout-secs-hint = Cuánto esperar a que un servidor de modelos acepte una conexión antes de probar otra réplica.
setting-gateway-first-byte-timeout-secs = Tiempo hasta el primer byte (segundos)
setting-gateway-first-byte-timeout-secs-hint = Cuánto puede tardar un servidor de modelos en empezar a responder (el prellenado de un prompt largo lleva tiempo: sea generoso); después la solicitud falla con 504.
setting-gateway-idle-timeout-secs = Tiempo de inactividad entre fragmentos (segundos)
setting-gateway-idle-timeout-secs-hint = Cuánto puede pausar una respuesta ya empezada entre dos fragmentos; después termina con un error y se libera la plaza.
setting-gateway-media-urls = URL de medios que los motores pueden descargar
setting-gateway-media-urls-hint = Los motores descargan ellos mismos las URL de imagen, audio y vídeo de una solicitud, desde dentro de su red. «Solo públicas» rechaza (400) file: y otros esquemas, y los hosts que son direcciones o nombres de loopback, privados, de enlace local o de metadatos de la nube; las URL data: siempre pasan. Los nombres de host no se resuelven: mantenga filtrado por cortafuegos el tráfico saliente de los motores.
setting-gateway-media-urls-public = Solo hosts públicos y URL data:
setting-gateway-media-urls-any = Cualquier URL (los motores descargan lo que envíen los clientes)
setting-activity-retention-days = Conservar la actividad (días)
setting-activity-retention-days-hint = Los registros más antiguos se eliminan cada hora.

## Grupos

groups-caption = Grupos de la pasarela
groups-empty = Todavía no hay grupos.
group-new = Nuevo grupo
group-new-title = Nuevo grupo
group-edit-title = Editar el grupo «{ $name }»
group-name = Nombre
group-name-hint = Letras, cifras, puntos, guiones bajos o guiones. Al renombrarlo se conservan todas las referencias.
group-description = Descripción
group-roles = Funciones
group-members = Miembros
group-members-filter = Filtrar usuarios
group-members-none = Todavía no hay usuarios.
group-members-everyone = Todos (grupo predeterminado)
group-members-nobody = Sin miembros
group-priority-hint = Los miembros heredan la prioridad más alta de todos sus grupos. «Sin definir» la deja en manos de sus otros grupos o del valor predeterminado del sistema.
group-priority-none = Sin definir
group-priority-of = Prioridad del grupo { $name }
group-priority-saved = Prioridad del grupo «{ $name }» guardada.
group-is-admin = Administradores
group-is-admin-hint = Los miembros pueden administrar aiplane.
group-is-default = Grupo predeterminado
group-is-default-hint = Todos los usuarios pertenecen a él sin figurar en la lista.
group-badge-admin = Administradores
group-badge-default = Predeterminado
group-actions = Acciones para el grupo { $name }
group-delete-confirm = ¿Eliminar el grupo «{ $name }»? Sus miembros pierden lo que les otorgaba.
group-deleted = Grupo «{ $name }» eliminado.
group-saved = Grupo «{ $name }» guardado.
group-created = Grupo «{ $name }» creado.

## Usuarios

users-caption = Cuentas locales
user-new = Nuevo usuario
user-new-title = Nuevo usuario
user-edit-title = Editar el usuario «{ $name }»
user-create = Crear usuario
user-username = Nombre de usuario
user-username-hint = Solo letras, cifras y @ . + - _.
user-email = Correo electrónico
user-password = Contraseña
user-password-hint = Sin contraseña, la cuenta no puede iniciar sesión hasta que se le asigne una.
user-new-password = Nueva contraseña
user-new-password-hint = Déjela vacía para conservar la contraseña actual.
user-active = Activo
user-active-hint = Las cuentas inactivas no pueden iniciar sesión y sus tokens dejan de funcionar.
user-status = Estado
user-groups = Grupos
user-last-login = Último inicio de sesión
user-badge-active = Activo
user-badge-inactive = Inactivo
user-badge-admin = Administrador
user-is-you = Es usted
user-actions = Acciones para el usuario { $name }
user-delete-confirm = ¿Eliminar la cuenta «{ $name }» y todos sus tokens?
user-deleted = Usuario «{ $name }» eliminado.
user-saved = Usuario «{ $name }» guardado.
user-created = Usuario «{ $name }» creado.

## Todos los tokens

admin-tokens-caption = Todos los tokens de API
admin-tokens-empty = Nadie ha creado todavía un token.
admin-tokens-filter = Filtrar por token o propietario
admin-tokens-count = Se muestran { $shown } de { $total } tokens
admin-tokens-priority-disabled = La priorización de solicitudes está desactivada: estas elecciones surtirán efecto cuando se active en Ajustes.
admin-token-name = Token
admin-token-owner = Propietario
admin-token-state = Estado
admin-token-effective = En vigor
admin-token-priority-of = Prioridad del token { $name } de { $owner }
admin-token-inherits = Hereda { $priority } de los grupos del propietario.
admin-token-set-by-admin = Fijada por { $name } (administrador).
admin-token-set-by-owner = Fijada por { $name } (propietario).
admin-token-actions = Acciones para el token { $name } de { $owner }
admin-token-revoke-confirm = ¿Revocar «{ $name }» de { $owner }? Los programas que lo usan dejarán de funcionar de inmediato, y { $owner } verá que usted lo revocó.
admin-token-delete-confirm = ¿Eliminar «{ $name }» de { $owner } definitivamente? Los programas que lo usan dejarán de funcionar de inmediato.
admin-token-revoked = Token «{ $name }» de { $owner } revocado.
admin-token-deleted = Token «{ $name }» de { $owner } eliminado.
