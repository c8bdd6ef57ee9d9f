# Lo que queda de la cuota propia, en el panel de uso de la página de tokens.

my-allowance-title = Lo que queda de su cuota
my-allowance-intro = Se cuenta en periodos fijos en UTC: el minuto, el día, el mes. Una solicitud en curso reserva lo máximo que puede consumir hasta que termina.
my-allowance-mine = Sus límites (todos sus tokens juntos)
my-allowance-token = Límites propios del token «{ $name }»
my-allowance-unlimited = Sin límites: puede usar tanto como quiera.
my-allowance-limit = Límite
my-allowance-used = Usado
my-allowance-remaining = Restante
my-allowance-resets = Se reinicia a las
my-allowance-of = { $used } de { $limit }
my-allowance-held = reservado por solicitudes en curso: { $amount }
my-allowance-unknown = desconocido por ahora
