# Tokens de API personales.

tokens-title = Tokens de API
tokens-intro = Los programas llaman a la pasarela con uno de estos tokens como token de portador. Un token hereda su prioridad, salvo que usted le asigne otra.
tokens-empty = Todavía no tiene ningún token.
tokens-create = Crear token
tokens-list-label = Sus tokens
tokens-owner-priority = Su prioridad heredada: { $priority }
tokens-max-priority = Prioridad más alta que puede elegir: { $priority }
tokens-priority-disabled = La priorización de solicitudes está desactivada en este momento. Sus elecciones tendrán efecto cuando un administrador la active.

token-prefix = Empieza por
token-created = Creado
token-last-used = Último uso
token-expires = Caduca
token-status-active = Activo
token-status-revoked = Revocado
token-status-expired = Caducado
token-priority-saved = Prioridad guardada.
token-actions = Acciones para { $name }
token-revoke = Revocar
token-rotate = Renovar
token-delete = Eliminar
token-revoke-confirm = ¿Revocar «{ $name }»? Los programas que lo usan dejarán de funcionar de inmediato.
token-rotate-confirm = ¿Renovar «{ $name }»? El secreto actual dejará de funcionar y se mostrará uno nuevo una sola vez.
token-delete-confirm = ¿Eliminar «{ $name }» definitivamente?
token-revoked = Token «{ $name }» revocado.
token-deleted = Token «{ $name }» eliminado.
token-revoked-by = Revocado por { $name } el { $date }.
token-revoked-on = Revocado el { $date }.

create-title = Crear un token
create-name = Nombre
create-name-hint = Por ejemplo, el programa o la máquina que lo usará.
create-priority-hint = «Heredar» sigue a sus grupos. Elija una prioridad más baja para trabajos en segundo plano.
create-submit = Crear token

secret-title = Copie su token ahora
secret-once = Esta es la única vez que se muestra el token. Guárdelo en un lugar seguro.
secret-label = Token nuevo
secret-copy = Copiar
secret-copied = Copiado al portapapeles.
secret-copy-failed = No se pudo copiar. Seleccione el token y cópielo a mano.
secret-done = Listo
