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
