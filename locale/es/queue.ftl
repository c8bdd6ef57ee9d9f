# La cola de admisión en directo.

queue-title = Cola
queue-intro = Solicitudes que esperan un hueco libre en un servidor, primero las de mayor prioridad.
queue-empty = No hay ninguna solicitud en espera.
