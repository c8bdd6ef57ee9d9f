# Песочница для чата.

playground-title = Песочница
playground-intro = Отправьте модели сообщение от своего имени с унаследованным приоритетом и остановите его в любой момент.
playground-model = Модель
playground-message = Сообщение
playground-send = Отправить
playground-stop = Остановить
playground-conversation = Диалог
playground-clear = Новый диалог
playground-empty = Пока ничего не отправлено. Выберите модель, напишите сообщение и нажмите «Отправить».
playground-message-hint = Ctrl+Enter — отправить.
playground-no-models = Вам не доступна ни одна модель.
playground-no-models-option = Нет моделей
playground-empty-message = Сначала напишите сообщение.
playground-you = Вы
playground-assistant = Модель
playground-runs-at = Ваши запросы выполняются с приоритетом «{ $priority }».
playground-one-class = Приоритизация запросов выключена: все запросы в одном классе.
playground-waiting = Ожидание свободного сервера моделей…
playground-streaming = Идёт ответ…
playground-done = Ответ получен полностью.
playground-stopped = Остановлено.
playground-stopped-before = Остановлено до начала ответа.
playground-stopped-partial = Остановлено; ответ неполный.
playground-cut-short = Ответ оборвался.
playground-ran-at = Этот ответ выполнялся с приоритетом «{ $priority }».
playground-answered-by = Ответил { $backend } после { $wait } с в очереди (всего { $seconds } с).
