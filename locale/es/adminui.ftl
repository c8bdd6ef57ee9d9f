# Administración: retoques de las páginas Cola, Servidores, Grupos de servidores, Usuarios y Grupos, contraseñas, renombrar.

queue-order-intro = Cada fila es un conjunto de servidores cuyos huecos comparten sus solicitudes; la primera fila obtiene el siguiente hueco libre. Decide primero la clase y después el orden del planificador: la puntuación (planificador «serial»), la indicación y el tiempo de espera.
queue-position = Puesto
queue-position-value = { $position }.º
queue-score = Puntuación
queue-waits-for = Espera a
queue-line-heading = { $backends }: { $count ->
    [one] espera una solicitud
   *[other] esperan { $count } solicitudes
}
