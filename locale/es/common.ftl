# Diseño, navegación, botones y palabras comunes, nombres de idiomas.

product-name = aiplane
product-tagline = Pasarela de LLM
page-title = { $page } · aiplane
skip-to-content = Saltar al contenido
nav-label = Navegación principal
nav-menu = Menú
nav-tokens = Tokens
nav-playground = Zona de pruebas
nav-admin = Administración
nav-admin-settings = Ajustes
nav-admin-groups = Grupos
nav-admin-users = Usuarios
nav-admin-tokens = Tokens
nav-admin-backends = Servidores
nav-admin-queue = Cola
nav-admin-activity = Actividad

language-label = Idioma
language-name-en = Inglés
language-name-de = Alemán
language-name-fr = Francés
language-name-es = Español
language-name-ru = Ruso
language-name-zh = Chino
signed-in-as = Sesión iniciada como { $username }
sign-out = Cerrar sesión

action-save = Guardar
action-cancel = Cancelar
action-close = Cerrar
action-create = Crear
action-delete = Eliminar
action-dismiss = Ocultar
action-edit = Editar
column-actions = Acciones
status-loading = Cargando…
status-saving = Guardando…
status-saved = Guardado.
value-never = Nunca
value-none = —
value-yes = Sí
value-no = No
value-on = Activado
value-off = Desactivado
value-not-reported = No informado
duration-seconds = { $seconds } s
duration-minutes = { $minutes } min { $seconds } s
duration-hours = { $hours } h { $minutes } min
duration-ms = { $ms } ms

priority-label = Prioridad
priority-inherit = Heredar
priority-inherit-with = Heredar ({ $priority })
priority-low = Baja
priority-medium = Media
priority-high = Alta

shell-pending = Los controles de esta página aún no están disponibles.

forbidden-title = Acceso denegado
forbidden-body = Esta página es solo para administradores. Pida acceso a un administrador si lo necesita.
not-found-title = Página no encontrada
not-found-body = No hay ninguna página en esta dirección.
back-home = Volver a sus tokens
