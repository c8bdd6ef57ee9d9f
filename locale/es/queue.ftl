# La cola en directo.

queue-title = Cola
queue-intro = Solicitudes que esperan un hueco libre en un servidor, en el orden en que se les asignará.
queue-empty = No hay ninguna solicitud en espera.
queue-priority-off = La priorización de solicitudes está desactivada: todas las solicitudes esperan en una sola clase, por orden de llegada.
queue-depth = En espera por clase
queue-waiters = Solicitudes en espera
queue-class = Clase
queue-model = Modelo
queue-user = Usuario
queue-token = Token
queue-token-session = Navegador (zona de pruebas)
queue-age = Esperando desde hace
queue-estimate = Espera estimada
queue-estimate-intro = La espera estimada cuenta las solicitudes que van delante al ritmo con el que sus servidores han aceptado solicitudes últimamente; es desconocida hasta que hayan aceptado algunas.
queue-estimate-unknown = desconocida
queue-estimate-under-second = menos de 1 s
queue-estimate-seconds = unos { $seconds } s
queue-estimate-minutes = unos { $minutes } min
queue-estimate-hours = unas { $hours } h
queue-backends = Servidores
queue-backends-empty = Ningún servidor está en servicio.
queue-backend = Servidor
queue-health = Estado

queue-recent = Últimas asignaciones
queue-recent-intro = Las últimas 20 solicitudes que obtuvieron un hueco en un servidor, primero la más reciente.
queue-recent-empty = No se ha asignado ninguna solicitud desde que se inició la pasarela.
queue-recent-time = Hora
queue-recent-waited = Espera en cola
queue-recent-ago = hace { $duration }

live-connecting = Conectando…
live-connected = En directo
live-polling = Actualización cada 2 segundos
live-offline = Datos en directo no disponibles
live-stopped = Detenida
live-not-admin = Ya no es administrador, por lo que la cola en directo se ha detenido. Vuelva a cargar la página cuando se restablezcan sus permisos.
live-signed-out = Se ha cerrado su sesión, por lo que la cola en directo se ha detenido. Vuelva a iniciar sesión para seguirla.
