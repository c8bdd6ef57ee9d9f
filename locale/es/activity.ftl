# El registro de cada solicitud.

activity-title = Actividad
activity-intro = Solicitudes recientes con su prioridad, su tiempo de espera y su resultado.
activity-empty = Todavía no se ha registrado ninguna solicitud.
activity-filters = Filtros
activity-caption = Registros de actividad, los más recientes primero
activity-user = Usuario
activity-model = Modelo
activity-class = Clase
activity-outcome = Resultado
activity-since = Desde
activity-until = Hasta
activity-any = Cualquiera
activity-apply = Aplicar filtros
activity-reset = Restablecer
activity-time = Hora
activity-backend = Servidor
activity-queue-wait = Espera en cola
activity-status = Estado HTTP
activity-duration = Duración
activity-token = Token { $name }
activity-browser = Sesión del navegador
activity-hint = Indicación: { $hint }
activity-pages = Páginas
activity-previous = Anterior
activity-next = Siguiente
activity-page-of = Página { $page } de { $pages } · { $count } registros

outcome-immediate = Inmediata
outcome-waited = Tras esperar
outcome-expired = Caducada
outcome-cancelled = Cancelada
outcome-rejected = Rechazada
outcome-client-closed = El cliente se fue
outcome-upstream-error = Fallo del servidor
outcome-error = Error
outcome-unknown = Desconocido
