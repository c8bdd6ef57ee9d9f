# Administración: retoques de las páginas Cola, Servidores, Pools, Usuarios y Grupos, contraseñas, renombrar.

queue-order-intro = Cada fila es un conjunto de servidores cuyos huecos comparten sus solicitudes; la primera fila obtiene el siguiente hueco libre. Decide primero la clase y después el orden del planificador: la puntuación (planificador «serial»), la indicación y el tiempo de espera.
queue-position = Puesto
queue-position-value = { $position }.º
queue-score = Puntuación
queue-waits-for = Espera a
queue-line-heading = { $backends }: { $count ->
    [one] espera una solicitud
   *[other] esperan { $count } solicitudes
}

backend-no-pool = En ningún pool: nadie puede llamar a sus modelos (responden 404) hasta que un pool incluya este servidor.
backend-saved-no-pool = Servidor «{ $name }» guardado, pero no está en ningún pool: sus modelos responden 404 hasta que un pool lo incluya.
backend-detect-failed = La detección de { $name } ha fallado: su tarjeta indica por qué.
backend-detect-failed-unreachable = La detección ha fallado: { $url } no ha respondido ({ $error }).
backend-detect-failed-status = La detección ha fallado: { $url } ha respondido { $status } ({ $error }).
backend-detect-failed-not-models = La detección ha fallado: { $url } ha respondido, pero no con una lista de modelos ({ $error }).
backend-part-pools = Pools
backend-pools-hint = Los pools en los que sirve este servidor; cada pool decide quién puede llamar a sus modelos.
backend-pools-none = Todavía no existe ningún pool: cree uno en Pools y añada este servidor.

pool-access = Quién puede usarlo
pool-access-everyone = Todos
pool-access-everyone-hint = Cada persona y cada token, sean cuales sean sus grupos.
pool-access-groups = Solo los miembros de estos grupos
pool-access-nobody = Ningún grupo marcado: nadie puede usar este pool.
pool-groups-nobody = Nadie
pool-widen-confirm = ¿Abrir el pool «{ $name }» a todos? Cada persona y cada token podrá usar sus modelos, no solo los grupos permitidos ahora.
pool-widen-action = Abrir a todos

error-access-widening = Quitar todos los grupos abriría el pool a todos: elija «Todos» para permitirlo.

account-title = Cuenta
account-intro = Ha iniciado sesión como { $username }. Cambie aquí su contraseña.
account-link = Su cuenta: cambiar la contraseña
account-password = Cambiar la contraseña
account-current-password = Contraseña actual
account-new-password = Contraseña nueva
account-new-password-hint = Los demás navegadores con su sesión iniciada la cierran; este la mantiene.
account-confirm-password = Repita la contraseña nueva
account-password-save = Cambiar la contraseña
account-password-changed = Su contraseña se ha cambiado.
account-password-mismatch = Las dos contraseñas nuevas no coinciden.
password-refused = La contraseña no se acepta:
password-reason-password-too-short = Es demasiado corta: use al menos { $min_length } caracteres.
password-reason-password-too-similar = Se parece demasiado al nombre de usuario o a la dirección de correo.
password-reason-password-too-common = Es demasiado común: figura en listas de contraseñas muy usadas.
password-reason-password-entirely-numeric = Solo contiene dígitos.
error-wrong-password = La contraseña actual no es correcta.
user-priority = Prioridad
user-max-priority = tokens hasta { $priority }
user-groups-hint = Los grupos de los que esta persona es miembro; los grupos predeterminados ya incluyen a todos.
user-groups-none = Todavía no hay grupos que elegir (los grupos predeterminados incluyen a todos).

token-raised-by = El administrador { $admin } fijó este token en { $priority }. Puede bajarlo, pero no volver a subirlo: lo máximo que puede elegir es { $max }.
token-raised-by-unknown = Un administrador fijó este token en { $priority }. Puede bajarlo, pero no volver a subirlo: lo máximo que puede elegir es { $max }.
