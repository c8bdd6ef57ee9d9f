# La zona de pruebas de chat.

playground-title = Zona de pruebas
playground-intro = Envíe un chat a un modelo en su nombre, con su prioridad heredada, y deténgalo cuando quiera.
playground-model = Modelo
playground-message = Mensaje
playground-send = Enviar
playground-stop = Detener
