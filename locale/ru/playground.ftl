# Песочница для чата.

playground-title = Песочница
playground-intro = Отправьте модели сообщение от своего имени с унаследованным приоритетом и остановите его в любой момент.
playground-model = Модель
playground-message = Сообщение
playground-send = Отправить
playground-stop = Остановить
