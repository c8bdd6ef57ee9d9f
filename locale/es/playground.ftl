# La zona de pruebas de chat.

playground-title = Zona de pruebas
playground-intro = Envíe un chat a un modelo en su nombre, con su prioridad heredada, y deténgalo cuando quiera.
playground-model = Modelo
playground-message = Mensaje
playground-send = Enviar
playground-stop = Detener
playground-conversation = Conversación
playground-clear = Nueva conversación
playground-empty = Todavía no ha enviado nada. Elija un modelo, escriba un mensaje y pulse Enviar.
playground-message-hint = Ctrl+Intro envía el mensaje.
playground-no-models = No tiene ningún modelo disponible.
playground-no-models-option = Sin modelos
playground-empty-message = Escriba primero un mensaje.
playground-you = Usted
playground-assistant = Modelo
playground-runs-at = Sus solicitudes se ejecutan con prioridad { $priority }.
playground-one-class = La priorización de solicitudes está desactivada: todas las solicitudes comparten una clase.
playground-waiting = Esperando a un servidor de modelos libre…
playground-streaming = Respondiendo…
playground-done = Respuesta completa.
playground-stopped = Detenido.
playground-stopped-before = Detenido antes de que empezara la respuesta.
playground-stopped-partial = Detenido; la respuesta está incompleta.
playground-cut-short = La respuesta se cortó.
playground-ran-at = Esta respuesta se ejecutó con prioridad { $priority }.
playground-answered-by = Respondido por { $backend } tras { $wait } s en la cola ({ $seconds } s en total).
