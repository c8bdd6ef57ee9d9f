# El registro de solicitudes.

activity-title = Actividad
activity-intro = Solicitudes recientes con su prioridad, su tiempo de espera y su resultado.
activity-empty = Todavía no se ha registrado ninguna solicitud.
